#!/usr/bin/env python3
"""Turn standard dex files (as smali writes them) into the two layouts no Debian tool writes,
for perch's dex tests:

  dex-convert.py cdex IN.dex OUT.cdex
      ART compact dex ("cdex001"): a 0x88-byte header and the id tables, then a data section
      (header + data_off) that is the whole input file followed by compact code items, new
      class data and the debug-info offset table. Every offset other than the id tables counts
      from the data section, as in ART; the input's own offsets stay valid because the data
      section starts with the input. Code items alternate between the short form and an
      instruction count held in the pre-header, and use a register pre-header when needed, so
      both decode paths run. Debian's dexdump (ART 11) reads the result: it is the oracle.

  dex-convert.py container IN1.dex IN2.dex ... OUT.dex
      a dex 041 container: each input becomes one dex with a 0x78-byte header (container_size,
      header_offset) whose offsets all count from the container's start. The id tables move to
      the end of each part (the longer header overwrites the start of the first one); class
      data is rewritten; annotation contents are not relocated (nothing perch reads).

Layouts: docs/design/android-art.md section 2.3; ART libdexfile compact_dex_file.h,
compact_offset_table.cc.
"""
import struct
import sys


def u16(b, o):
    return struct.unpack_from('<H', b, o)[0]


def u32(b, o):
    return struct.unpack_from('<I', b, o)[0]


def uleb(b, o):
    v = shift = 0
    while True:
        x = b[o]
        o += 1
        v |= (x & 0x7f) << shift
        shift += 7
        if not x & 0x80:
            return v, o


def sleb(b, o):
    v = shift = 0
    while True:
        x = b[o]
        o += 1
        v |= (x & 0x7f) << shift
        shift += 7
        if not x & 0x80:
            if x & 0x40:
                v -= 1 << shift
            return v, o


def enc_uleb(v):
    out = bytearray()
    while True:
        x = v & 0x7f
        v >>= 7
        if v:
            out.append(x | 0x80)
        else:
            out.append(x)
            return bytes(out)


def align(buf, n):
    while len(buf) % n:
        buf.append(0)


class Dex:
    FIELDS = ['string_ids', 'type_ids', 'proto_ids', 'field_ids', 'method_ids', 'class_defs']
    SIZES = {'string_ids': 4, 'type_ids': 4, 'proto_ids': 12, 'field_ids': 8,
             'method_ids': 8, 'class_defs': 32}

    def __init__(self, data):
        if data[:4] != b'dex\n' or u32(data, 36) != 0x70:
            sys.exit('dex-convert: input must be a standard dex with a 0x70-byte header')
        self.b = data
        self.map_off = u32(data, 52)
        self.tab = {}
        for i, name in enumerate(self.FIELDS):
            self.tab[name] = (u32(data, 56 + 8 * i), u32(data, 60 + 8 * i))

    def table(self, name):
        size, off = self.tab[name]
        return bytearray(self.b[off:off + size * self.SIZES[name]])

    def class_data(self, off):
        """[(kind, [(idx_diff, flags, code_off)])] for static/instance fields, direct/virtual
        methods, as stored."""
        b = self.b
        counts = []
        for _ in range(4):
            v, off = uleb(b, off)
            counts.append(v)
        lists = []
        for k in range(4):
            items = []
            for _ in range(counts[k]):
                a, off = uleb(b, off)
                f, off = uleb(b, off)
                c = 0
                if k >= 2:
                    c, off = uleb(b, off)
                items.append((a, f, c))
            lists.append(items)
        return lists

    def code_item(self, off):
        b = self.b
        regs, ins, outs, tries = (u16(b, off + 2 * i) for i in range(4))
        dbg, n = u32(b, off + 8), u32(b, off + 12)
        insns = b[off + 16:off + 16 + 2 * n]
        extra = b''
        if tries:
            t = off + 16 + 2 * n
            t += (4 - t % 4) % 4
            h = t + 8 * tries
            p = h
            count, p = uleb(b, p)
            for _ in range(count):
                size, p = sleb(b, p)
                for _ in range(abs(size)):
                    _, p = uleb(b, p)
                    _, p = uleb(b, p)
                if size <= 0:
                    _, p = uleb(b, p)
            extra = b[t:p]
        return regs, ins, outs, tries, dbg, n, insns, extra


def enc_class_data(lists, code_map):
    out = bytearray()
    for items in lists:
        out += enc_uleb(len(items))
    for k, items in enumerate(lists):
        for a, f, c in items:
            out += enc_uleb(a) + enc_uleb(f)
            if k >= 2:
                out += enc_uleb(code_map(c) if c else 0)
    return bytes(out)


def method_indices(lists):
    """(method_idx, code_off) of the direct and virtual methods."""
    res = []
    for k in (2, 3):
        idx = 0
        for i, (a, _, c) in enumerate(lists[k]):
            idx = a if i == 0 else idx + a
            res.append((idx, c))
    return res


def offset_table(offsets):
    """CompactOffsetTable::Build: (data, min_offset, table_offset)."""
    nz = [o for o in offsets if o]
    base = min(nz) if nz else 0xffffffff
    data = bytearray()
    blocks = []
    for s in range(0, len(offsets), 16):
        blocks.append(len(data))
        blk = offsets[s:s + 16]
        mask = 0
        for i, o in enumerate(blk):
            if o:
                mask |= 1 << i
        data += bytes([mask >> 8, mask & 0xff])
        prev = base
        for o in blk:
            if o:
                data += enc_uleb((o - prev) & 0xffffffff)  # uint32 wrap, as ART
                prev = o
    align(data, 4)
    table_off = len(data)
    for x in blocks:
        data += struct.pack('<I', x)
    return data, base, table_off


def code_item_bytes(out, regs, ins, outs, tries, n, insns, long_count):
    """Append a compact code item (CompactDexFile::CodeItem::Create) and its instructions to
    @out; the instruction count goes into the pre-header when @long_count. Returns the
    item's offset in @out (after the pre-header)."""
    flags = 0
    pre = []  # u16 words in the order they are read going backwards
    if long_count:
        flags |= 0x10
        pre += [n & 0xffff, n >> 16]
        count = 0
    else:
        count = n
    fields = [regs - ins, ins, outs, tries]
    for bit, v in enumerate(fields):
        if v > 0xf:
            flags |= 1 << bit
            pre.append(v & ~0xf)
            fields[bit] = v & 0xf
    # place the item so that insns + tries keep 4-byte alignment rules simple
    while (len(out) + 2 * len(pre)) % 4:
        out.append(0)
    for w in reversed(pre):
        out += struct.pack('<H', w)
    at = len(out)
    out += struct.pack('<HH', fields[0] << 12 | fields[1] << 8 | fields[2] << 4 | fields[3],
                       count << 5 | flags)
    out += insns
    return at


def to_cdex(dx):
    out = bytearray(0x88)
    offs = {}
    tables = {name: dx.table(name) for name in Dex.FIELDS}
    for name in Dex.FIELDS:
        align(out, 4)
        offs[name] = len(out)
        out += tables[name]
    align(out, 8)
    data_off = len(out)
    out += dx.b
    data_pos = lambda: len(out) - data_off  # noqa: E731

    nmeth = dx.tab['method_ids'][0]
    debug = [0] * nmeth
    new_code = {}
    cdefs = tables['class_defs']
    flip = 0
    for i in range(dx.tab['class_defs'][0]):
        cdo = u32(cdefs, 32 * i + 24)
        if not cdo:
            continue
        lists = dx.class_data(cdo)
        for idx, c in method_indices(lists):
            if not c or c in new_code:
                continue
            regs, ins, outs, tries, dbg, n, insns, extra = dx.code_item(c)
            debug[idx] = dbg
            flip ^= 1
            new_code[c] = code_item_bytes(out, regs, ins, outs, tries, n, insns,
                                          flip or n >= 1 << 11) - data_off
            if tries:
                align(out, 4)
                out += extra
        align(out, 4)
        blob = enc_class_data(lists, lambda c: new_code[c])
        struct.pack_into('<I', cdefs, 32 * i + 24, data_pos())
        out += blob
    out[offs['class_defs']:offs['class_defs'] + len(cdefs)] = cdefs

    align(out, 4)
    dbg_pos = data_pos()
    tdata, base, table_off = offset_table(debug)
    out += tdata
    align(out, 4)

    out[0:8] = b'cdex001\0'
    struct.pack_into('<I', out, 32, len(out))
    struct.pack_into('<II', out, 36, 0x88, 0x12345678)
    struct.pack_into('<I', out, 52, dx.map_off)
    for i, name in enumerate(Dex.FIELDS):
        struct.pack_into('<II', out, 56 + 8 * i, dx.tab[name][0], offs[name])
    struct.pack_into('<II', out, 104, len(out) - data_off, data_off)
    # feature_flags, debug_info_offsets_pos, _table_offset, debug_info_base, owned data range
    struct.pack_into('<IIIIII', out, 112, 0, dbg_pos, table_off, base, 0, len(out) - data_off)
    return bytes(out)


def relocate(dx, tables, base):
    """Add @base to every data offset the id tables and the code items of @dx hold (the input's
    offsets count from its start; @base is where that start lands). Returns a copy of the input
    with its code items' debug_info_off moved."""
    out = bytearray(dx.b)
    rel = lambda o: o + base if o else 0  # noqa: E731
    for i in range(dx.tab['string_ids'][0]):
        struct.pack_into('<I', tables['string_ids'], 4 * i, u32(tables['string_ids'], 4 * i) + base)
    for i in range(dx.tab['proto_ids'][0]):
        struct.pack_into('<I', tables['proto_ids'], 12 * i + 8, rel(u32(tables['proto_ids'],
                                                                        12 * i + 8)))
    cdefs = tables['class_defs']
    done = set()
    for i in range(dx.tab['class_defs'][0]):
        for f in (12, 20, 28):
            struct.pack_into('<I', cdefs, 32 * i + f, rel(u32(cdefs, 32 * i + f)))
        cdo = u32(cdefs, 32 * i + 24)
        if not cdo:
            continue
        for _, c in method_indices(dx.class_data(cdo)):
            if c and c not in done:
                done.add(c)
                struct.pack_into('<I', out, c + 8, rel(u32(dx.b, c + 8)))
    return out


def string_item(b, off):
    """The bytes of the string_data_item at @off (ULEB length, MUTF-8, NUL)."""
    _, p = uleb(b, off)
    return bytes(b[off:b.index(0, p) + 1])


def to_vdex(dexes, pad):
    """Compact dex files the way dex2oat lays them out in a vdex (oat_writer.cc
    WriteDexFiles, CompactDexWriter::Write): the main sections (0x88-byte header + id tables,
    file_size covering only them) one after the other, 4-byte aligned, then ONE data section
    shared by all. Each header's data_off points from the header to that section; data_size is
    the end of the part of it this dex may use (growing with every dex written); the dex's own
    items lie in [owned_data_begin, owned_data_end) of it. String data equal to an earlier
    dex's is deduplicated to that copy, as the writer's data_item_dedupe_ does, so a dex reads
    names from another dex's owned range. @pad zero bytes end every owned range (to make the
    section large enough that reading all of it shows). Offset 0 of the section is reserved."""
    shared = bytearray(8)
    seen = {}
    mains = []
    for dx in dexes:
        align(shared, 8)
        base = len(shared)
        tables = {name: dx.table(name) for name in Dex.FIELDS}
        shared += relocate(dx, tables, base)
        nmeth = dx.tab['method_ids'][0]
        debug = [0] * nmeth
        new_code = {}
        cdefs = tables['class_defs']
        for i in range(dx.tab['class_defs'][0]):
            cdo = u32(cdefs, 32 * i + 24)
            if not cdo:
                continue
            lists = dx.class_data(cdo)
            for idx, c in method_indices(lists):
                if not c or c in new_code:
                    continue
                regs, ins, outs, tries, dbg, n, insns, extra = dx.code_item(c)
                debug[idx] = dbg + base if dbg else 0
                new_code[c] = code_item_bytes(shared, regs, ins, outs, tries, n, insns,
                                              n >= 1 << 11)

                if tries:
                    align(shared, 4)
                    shared += extra
            align(shared, 4)
            struct.pack_into('<I', cdefs, 32 * i + 24, len(shared))
            shared += enc_class_data(lists, lambda c: new_code[c])
        # strings an earlier dex already has: point at its copy
        sids = tables['string_ids']
        for i in range(dx.tab['string_ids'][0]):
            off = u32(sids, 4 * i)
            item = string_item(shared, off)
            if item in seen:
                struct.pack_into('<I', sids, 4 * i, seen[item])
            else:
                seen[item] = off
        align(shared, 4)
        dbg_pos = len(shared)
        tdata, dbase, table_off = offset_table(debug)
        shared += tdata
        shared += bytes(pad)
        align(shared, 8)
        main = bytearray(0x88)
        offs = {}
        for name in Dex.FIELDS:
            align(main, 4)
            offs[name] = len(main)
            main += tables[name]
        align(main, 4)
        main[0:8] = b'cdex001\0'
        struct.pack_into('<I', main, 32, len(main))
        struct.pack_into('<II', main, 36, 0x88, 0x12345678)
        struct.pack_into('<I', main, 52, dx.map_off + base)
        for i, name in enumerate(Dex.FIELDS):
            struct.pack_into('<II', main, 56 + 8 * i, dx.tab[name][0], offs[name])
        struct.pack_into('<I', main, 104, len(shared))  # data_size; data_off set below
        struct.pack_into('<IIIIII', main, 112, 0, dbg_pos, table_off, dbase, base, len(shared))
        mains.append(main)
    out = bytearray(b'perch-vdex-like\0')  # stands for the vdex header: not parsed by perch
    starts = []
    for m in mains:
        align(out, 4)
        starts.append(len(out))
        out += m
    align(out, 4)
    for h in starts:
        struct.pack_into('<I', out, h + 108, len(out) - h)
    return bytes(out + shared)


def container_part(dx, h):
    """One dex of a 041 container whose header sits at container offset @h."""
    out = bytearray(dx.b)
    rel = lambda o: o + h if o else 0  # noqa: E731
    tables = {name: dx.table(name) for name in Dex.FIELDS}
    for i in range(dx.tab['string_ids'][0]):
        struct.pack_into('<I', tables['string_ids'], 4 * i, u32(tables['string_ids'], 4 * i) + h)
    for i in range(dx.tab['proto_ids'][0]):
        struct.pack_into('<I', tables['proto_ids'], 12 * i + 8, rel(u32(tables['proto_ids'],
                                                                        12 * i + 8)))
    cdefs = tables['class_defs']
    done = set()
    for i in range(dx.tab['class_defs'][0]):
        for f in (12, 20, 28):
            struct.pack_into('<I', cdefs, 32 * i + f, rel(u32(cdefs, 32 * i + f)))
        cdo = u32(cdefs, 32 * i + 24)
        if not cdo:
            continue
        lists = dx.class_data(cdo)
        for _, c in method_indices(lists):
            if c and c not in done:
                done.add(c)
                struct.pack_into('<I', out, c + 8, rel(u32(dx.b, c + 8)))
        align(out, 4)
        struct.pack_into('<I', cdefs, 32 * i + 24, len(out) + h)
        out += enc_class_data(lists, lambda c: c + h)
    offs = {}
    for name in Dex.FIELDS:
        align(out, 4)
        offs[name] = len(out) + h
        out += tables[name]
    align(out, 4)
    hdr = bytearray(dx.b[:0x70]) + bytearray(8)
    hdr[4:8] = b'041\0'
    struct.pack_into('<II', hdr, 36, 0x78, 0x12345678)
    struct.pack_into('<I', hdr, 52, rel(dx.map_off))
    for i, name in enumerate(Dex.FIELDS):
        struct.pack_into('<II', hdr, 56 + 8 * i, dx.tab[name][0], offs[name])
    struct.pack_into('<II', hdr, 104, 0, 0)
    struct.pack_into('<I', hdr, 116, h)
    out[:0x78] = hdr
    struct.pack_into('<I', out, 32, len(out))
    return out


def to_container(dexes):
    parts, h = [], 0
    for dx in dexes:
        p = container_part(dx, h)
        parts.append(p)
        h += len(p)
    for p in parts:
        struct.pack_into('<I', p, 112, h)
    return b''.join(bytes(p) for p in parts)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == 'cdex':
        res = to_cdex(Dex(open(sys.argv[2], 'rb').read()))
    elif len(sys.argv) >= 4 and sys.argv[1] == 'container':
        res = to_container([Dex(open(p, 'rb').read()) for p in sys.argv[2:-1]])
    elif len(sys.argv) >= 5 and sys.argv[1] == 'vdex':
        res = to_vdex([Dex(open(p, 'rb').read()) for p in sys.argv[3:-1]], int(sys.argv[2]))
    else:
        sys.exit('usage: dex-convert.py cdex IN OUT | container IN... OUT | vdex PAD IN... OUT')
    with open(sys.argv[-1], 'wb') as f:
        f.write(res)


if __name__ == '__main__':
    main()
