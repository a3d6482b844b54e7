package writer

// This file keeps the reader's recovery linear. A reader that lost its place
// checks every sync marker it finds; a false marker's length field can point up to
// maxChunkLen bytes ahead, so checking each candidate's CRC directly costs up to a
// mebibyte per marker, and a stretch of false markers costs the product of the two:
// quadratic. While recovering, the reader instead keeps the CRC-32C of every prefix
// of the bytes ahead (crcIndex) and computes a candidate's CRC from two prefix
// sums in constant time, since a CRC of a concatenation is a function of the
// CRCs of the parts (zlib's crc32_combine).

// Recovery mode ends once recoverQuiet bytes have been read without a bad
// checksum: outside it a candidate is checked directly, at hardware speed, and a
// failure costs at most maxChunkLen+8 bytes of checksumming per recoverQuiet bytes
// of input.
const recoverQuiet = 4 * maxChunkLen

// castagnoliReversed is the CRC-32C polynomial in the bit order of crc32's tables.
const castagnoliReversed = 0x82F63B78

// crcIndex holds sums[k], the CRC-32C (as crc32.Update(0, castagnoli, ·) gives it)
// of the bytes from file offset base to base+k, for the bytes the reader has
// buffered. Each byte is summed once; sums before the reader's position are dropped,
// so it holds at most one entry per buffered byte (maxChunkLen+chunkHeaderLen).
type crcIndex struct {
	on    bool
	base  int64
	sums  []uint32
	quiet int64 // the reader's offset when recovery may end
}

func (x *crcIndex) reset() {
	x.on = false
	x.sums = x.sums[:0]
}

// end is the file offset up to which sums reach.
func (x *crcIndex) end() int64 { return x.base + int64(len(x.sums)) - 1 }

// chunkCRC returns the checksum of the chunk at buf[r:], whose payload is n bytes
// long, as the writer computes it: CRC-32C of the length field, then the payload.
// buf[r] is at file offset off. It sums the bytes not yet summed.
func (x *crcIndex) chunkCRC(buf []byte, r int, off int64, n int) (crc uint32, summed int) {
	if len(x.sums) == 0 || x.end() < off {
		x.base, x.sums = off, append(x.sums[:0], 0)
	}
	if drop := int(off - x.base); drop > len(x.sums)/2 && drop > 4<<10 {
		x.sums = append(x.sums[:0], x.sums[drop:]...)
		x.base = off
	}
	stop := off + int64(chunkHeaderLen+n)
	if e := x.end(); e < stop {
		from := r + int(e-off)
		summed = int(stop - e)
		reg, tab := ^x.sums[len(x.sums)-1], castagnoli()
		for _, b := range buf[from : from+summed] {
			reg = tab[byte(reg)^b] ^ reg>>8
			x.sums = append(x.sums, ^reg)
		}
	}
	i := int(off + chunkHeaderLen - x.base) // payload start
	lenCRC := updateCRC(0, buf[r+4:r+8])
	// CRC(len ‖ payload) = shift(CRC(len), n) ⊕ CRC(payload), and
	// CRC(payload) = sums[i+n] ⊕ shift(sums[i], n); shift is linear.
	return shiftCRC(lenCRC^x.sums[i], n) ^ x.sums[i+n], summed
}

func updateCRC(crc uint32, b []byte) uint32 {
	crc, tab := ^crc, castagnoli()
	for _, c := range b {
		crc = tab[byte(crc)^c] ^ crc>>8
	}
	return ^crc
}

// shiftCRC multiplies crc by x^(8n) modulo the polynomial: the CRC of the same
// bytes followed by n zero bytes, without the pre- and post-inversion. It takes
// one multiplication per set bit of n.
func shiftCRC(crc uint32, n int) uint32 {
	for k := 0; n > 0; k++ {
		if n&1 != 0 {
			crc = mulCRC(x8pow2[k], crc)
		}
		n >>= 1
	}
	return crc
}

// mulCRC multiplies two polynomials modulo the CRC polynomial, bit-reversed as
// crc32 stores them (bit 31 is x^0).
func mulCRC(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReversed
		} else {
			b >>= 1
		}
	}
	return p
}

// x8pow2[k] is x^(8·2^k) modulo the polynomial; 32 entries cover any int32 n.
var x8pow2 = func() (t [32]uint32) {
	p := uint32(1) << 23 // x^8
	for k := range t {
		t[k] = p
		p = mulCRC(p, p)
	}
	return t
}()
