package writer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/tigrisgo/tigris/runtime/internal/num"
)

// MaxTailAnchor bounds the anchor Tail copies: a program's header and probe
// definitions take a few hundred bytes per hundred probes, twice.
const MaxTailAnchor = 4 << 20

// TailInfo says what Tail copied.
type TailInfo struct {
	// FileBytes is the file's size when Tail read it.
	FileBytes int64
	// AnchorBytes and RecentBytes are the bytes of whole chunks copied from the
	// file's start (header and definitions) and from its end (the recent
	// records), Chunks the number of chunks copied from the end.
	AnchorBytes, RecentBytes int64
	Chunks                   int
	// Omitted counts the file's bytes not copied: the middle, and a chunk
	// being written at the end.
	Omitted int64
}

// Tail writes to w a trace stream made of the start and the end of the trace
// file at path: the file magic; the file's anchor, its leading chunks up to the
// first that holds a record (the header and the definitions of every probe the
// stream carried when the file was started, twice); and the last whole chunks
// that fit in maxBytes. The result reads as a file whose middle was cut out:
// every chunk decodes on its own (docs/trace-format.md), so the recent
// records come out whole, with the anchor's wall-clock base. Probes first
// recorded after the file started have their definition in the middle; a
// reader names their records "probe#N" unless the caller adds definitions.
//
// Tail reads a file another goroutine or process may be appending to: each
// chunk copied is checked (sync marker, length, CRC-32C), so a chunk still
// being written, seen in part, is left out rather than cut. Memory is about
// maxBytes.
func Tail(w io.Writer, path string, maxBytes int64) (TailInfo, error) {
	var info TailInfo
	f, err := os.Open(path)
	if err != nil {
		return info, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return info, err
	}
	size := fi.Size()
	info.FileBytes = size
	var magic [len(fileMagic)]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil || magic != fileMagic {
		return info, fmt.Errorf("%s: not a tigris trace file (no file magic at its start)", path)
	}
	if _, err := w.Write(fileMagic[:]); err != nil {
		return info, err
	}

	// The anchor: whole chunks from the start while they hold no record.
	off := int64(len(fileMagic))
	hdr := make([]byte, chunkHeaderLen)
	var payload []byte
	for off+chunkHeaderLen <= size && info.AnchorBytes < MaxTailAnchor {
		if _, err := f.ReadAt(hdr, off); err != nil {
			break
		}
		n := int64(binary.LittleEndian.Uint32(hdr[4:8]))
		if !bytes.Equal(hdr[:4], syncMarker[:]) || n > maxChunkLen || off+chunkHeaderLen+n > size {
			break
		}
		if int64(cap(payload)) < n {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if _, err := f.ReadAt(payload, off+chunkHeaderLen); err != nil {
			break
		}
		if !validChunk(hdr, payload) || holdsRecord(payload) {
			break
		}
		if _, err := w.Write(hdr); err != nil {
			return info, err
		}
		if _, err := w.Write(payload); err != nil {
			return info, err
		}
		off += chunkHeaderLen + n
		info.AnchorBytes += chunkHeaderLen + n
	}

	// The end: whole, valid chunks of the last maxBytes after the anchor.
	start := num.Max(off, size-num.Max(maxBytes, 0))
	buf := make([]byte, size-start)
	n, err := f.ReadAt(buf, start)
	if err != nil && !errors.Is(err, io.EOF) {
		return info, err
	}
	buf = buf[:n]
	for i := 0; i+chunkHeaderLen <= len(buf); {
		j := bytes.Index(buf[i:], syncMarker[:])
		if j < 0 {
			break
		}
		i += j
		if i+chunkHeaderLen > len(buf) {
			break
		}
		n := int(binary.LittleEndian.Uint32(buf[i+4 : i+8]))
		if n > maxChunkLen || i+chunkHeaderLen+n > len(buf) || !validChunk(buf[i:i+chunkHeaderLen], buf[i+chunkHeaderLen:i+chunkHeaderLen+n]) {
			i++ // not a chunk, or one being written: look further
			continue
		}
		c := buf[i : i+chunkHeaderLen+n]
		if _, err := w.Write(c); err != nil {
			return info, err
		}
		info.RecentBytes += int64(len(c))
		info.Chunks++
		i += len(c)
	}
	info.Omitted = size - int64(len(fileMagic)) - info.AnchorBytes - info.RecentBytes
	return info, nil
}

// validChunk checks a chunk's CRC-32C over its length bytes and payload.
func validChunk(hdr, payload []byte) bool {
	crc := crc32.Update(0, castagnoli(), hdr[4:8])
	crc = crc32.Update(crc, castagnoli(), payload)
	return crc == binary.LittleEndian.Uint32(hdr[8:12])
}

// holdsRecord reports whether a chunk's payload holds an event record (or
// something Tail cannot skip over, which it treats the same way).
func holdsRecord(payload []byte) bool {
	for p := 0; p < len(payload); {
		if payload[p]&evBit != 0 {
			return true
		}
		l, k := binary.Uvarint(payload[p+1:])
		if k <= 0 || l > uint64(len(payload)) {
			return true
		}
		p += 1 + k + int(l)
	}
	return false
}
