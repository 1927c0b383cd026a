/* The current dex pc of a frame of ART's switch interpreter.
 *
 * The DEX PC marker in the CFI of ExecuteSwitchImplAsm (spec 3.1-3.3) gives the first
 * instruction of the method, never the current one: the wrapper is called with
 * accessor.Insns() and keeps it in a callee-saved register. The current instruction is in the
 * method's ShadowFrame: the switch interpreter stores it before every instruction
 * (`shadow_frame.SetDexPC(dex_pc)`, ART runtime/interpreter/interpreter_switch_impl-inl.h,
 * ExecuteSwitchImplCpp, the same from Android 9 to 14). The ShadowFrame is found through the
 * SwitchImplContext that ExecuteSwitchImpl (interpreter_switch_impl.h) builds on its own stack,
 * just above the wrapper's frame, and passes to it:
 *
 *   struct SwitchImplContext {            (unchanged from ART 946bb09a5a, 2018-03, to Android 14)
 *     Thread* self;                          +0
 *     const CodeItemDataAccessor& accessor;  +1 pointer
 *     ShadowFrame& shadow_frame;             +2 pointers
 *     JValue& result_register; bool interpret_one_instruction; JValue result; };
 *
 *   CodeItemDataAccessor (libdexfile/dex/code_item_accessors.h): u32 insns_size_in_code_units_;
 *     const u16 *insns_ (next pointer-aligned slot); u16 registers_size_, ins_size_,
 *     outs_size_, tries_size_ (after it).
 *
 *   ShadowFrame (runtime/interpreter/shadow_frame.h; this order since ART fc9555dac5, 2017-11,
 *   before Android 9, through Android 14): ShadowFrame* link_; ArtMethod* method_;
 *     JValue* result_register_; const u16* dex_pc_ptr_; const u16* dex_instructions_;
 *     LockCountData lock_count_data_ (one std::unique_ptr); const u32 number_of_vregs_;
 *     u32 dex_pc_; ...  -> number_of_vregs_ at 6 pointers, dex_pc_ 4 bytes later.
 *   GetDexPC() is dex_pc_ptr_ - dex_instructions_ when dex_pc_ptr_ is set (mterp), else
 *   dex_pc_ (in 16-bit code units).
 *
 * The match must hold at every step: a slot of the stack above the wrapper's frame points at an
 * accessor whose insns_ is exactly the marker's value, the next slot at a ShadowFrame with as
 * many registers as that accessor says and a dex pc inside the method. Anything else (another
 * layout, a frame of nterp or mterp, a stack the snapshot does not hold) gives no answer, and
 * the caller keeps the marker's value (the method's first line). */
#include <errno.h>
#include <string.h>

#include "perch/art/art.h"

#define ART_SWITCH_WINDOW 2048 /* bytes of stack searched above the wrapper's frame */

static int rd(const struct perch_mem *mem, uint64_t addr, size_t n, uint64_t *v)
{
	uint8_t b[8];

	*v = 0;
	if (mem->read(mem->ctx, addr, b, n) < 0)
		return -EFAULT;
	for (size_t i = n; i > 0; i--)
		*v = *v << 8 | b[i - 1];
	return 0;
}

/* Is @sf a ShadowFrame of a method of @units code units at @insns with @regs registers? Its
 * current dex pc into *@pc. */
static int shadow_frame_pc(const struct perch_mem *mem, size_t ptr, uint64_t sf, uint64_t insns,
			   uint64_t units, uint64_t regs, uint64_t *pc)
{
	uint64_t nvregs, pc_ptr, pc_units;

	if (!sf || sf % 4 || rd(mem, sf + 6 * ptr, 4, &nvregs) < 0 || nvregs != regs ||
	    rd(mem, sf + 3 * ptr, ptr, &pc_ptr) < 0 || rd(mem, sf + 6 * ptr + 4, 4, &pc_units) < 0)
		return -ENOENT;
	if (pc_ptr) {
		if (pc_ptr < insns || pc_ptr - insns >= 2 * units || (pc_ptr - insns) % 2)
			return -ENOENT;
		*pc = pc_ptr;
		return 0;
	}
	if (pc_units >= units)
		return -ENOENT; /* includes dex::kDexNoIndex while an exception is thrown */
	*pc = insns + 2 * pc_units;
	return 0;
}

int art_switch_dex_pc(const struct perch_mem *mem, int is_64, uint64_t sp, uint64_t insns,
		      uint64_t *dex_pc)
{
	size_t ptr = is_64 ? 8 : 4;

	if (!insns || insns % 2)
		return -EINVAL;
	for (uint64_t s = sp - sp % ptr; s + 3 * ptr <= sp + ART_SWITCH_WINDOW; s += ptr) {
		uint64_t acc, got, units, regs, sf;

		if (rd(mem, s + ptr, ptr, &acc) < 0)
			return -ERANGE; /* past what @mem holds: no answer either way */
		if (!acc || acc % 4 || rd(mem, acc + ptr, ptr, &got) < 0 || got != insns)
			continue;
		if (rd(mem, acc, 4, &units) < 0 || !units || rd(mem, acc + 2 * ptr, 2, &regs) < 0 ||
		    rd(mem, s + 2 * ptr, ptr, &sf) < 0)
			continue;
		if (shadow_frame_pc(mem, ptr, sf, insns, units, regs, dex_pc) == 0)
			return 0;
	}
	return -ENOENT;
}
