// cpp target: a function that is always inlined, so perch must show it from DWARF inline info.
// The test reads the HOT_INLINE_BEGIN/END markers to learn which lines belong to its body.
#ifndef PERCH_TARGET_CPP_HOT_H
#define PERCH_TARGET_CPP_HOT_H

namespace ns
{

static inline __attribute__((always_inline)) unsigned long hot_inline(unsigned long x)
{
	// HOT_INLINE_BEGIN
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
	// HOT_INLINE_END
}

} // namespace ns

#endif
