package monitor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// The probe table: how the generated code hands a package's probe
// descriptions to the monitor. It is one string constant, so it costs the
// binary its bytes in read-only data and nothing else: no code builds it at
// init, it holds no pointers (no relocations, nothing for the collector to
// scan), and it allocates nothing until it is decoded, with a fixed number of
// allocations per package whatever its number of probes.
//
// Every string a description holds (package paths, receivers, names, type
// strings of parameters and results, file names) is written once in a pool at
// the head of the table and named by its index, so a file name or "error" costs
// a byte or two a probe. Numbers are unsigned varints (encoding/binary). The
// layout:
//
//	tableMagic
//	n                                      strings in the pool
//	n × (len, bytes)
//	probes, refs                           probe count; parameters and results of all
//	probes × (package, recv, name, bits,   pool indexes; bits: 1 = pointer receiver
//	          params, params × type,
//	          results, results × type,
//	          file, line, flags, cyclomatic, statements)
//
// Decoded strings share the constant's bytes (the pool's entries are
// substrings of it).
const tableMagic = "tgt1"

// EncodeTable encodes probe descriptions in the form RegisterTable reads. The
// rewriter calls it for each instrumented package; the result is the same for
// the same descriptions.
func EncodeTable(infos []ProbeInfo) string {
	var pool []string
	index := map[string]uint64{}
	ref := func(s string) uint64 {
		i, ok := index[s]
		if !ok {
			i = uint64(len(pool))
			index[s] = i
			pool = append(pool, s)
		}
		return i
	}
	var body []byte
	u := func(v uint64) { body = binary.AppendUvarint(body, v) }
	refs := 0
	for i := range infos {
		in := &infos[i]
		refs += len(in.Params) + len(in.Results)
	}
	u(uint64(len(infos)))
	u(uint64(refs))
	for i := range infos {
		in := &infos[i]
		u(ref(in.Package))
		u(ref(in.Recv))
		u(ref(in.Name))
		bits := uint64(0)
		if in.RecvPtr {
			bits |= 1
		}
		u(bits)
		u(uint64(len(in.Params)))
		for _, t := range in.Params {
			u(ref(t))
		}
		u(uint64(len(in.Results)))
		for _, t := range in.Results {
			u(ref(t))
		}
		u(ref(in.File))
		u(uint64(in.Line))
		u(uint64(in.Flags))
		u(uint64(in.Cyclomatic))
		u(uint64(in.Statements))
	}
	out := []byte(tableMagic)
	out = binary.AppendUvarint(out, uint64(len(pool)))
	for _, s := range pool {
		out = binary.AppendUvarint(out, uint64(len(s)))
		out = append(out, s...)
	}
	return string(append(out, body...))
}

var errTable = errors.New("malformed probe table")

// decodeTable reads a table EncodeTable wrote. It allocates three slices
// whatever the number of probes: the pool, the descriptions, and the
// parameter and result types of them all.
func decodeTable(t string) ([]ProbeInfo, error) {
	if len(t) < len(tableMagic) || t[:len(tableMagic)] != tableMagic {
		return nil, fmt.Errorf("%w: not format %s", errTable, tableMagic)
	}
	d := tableReader{s: t, off: len(tableMagic)}
	n := d.count()
	pool := make([]string, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		l := d.count()
		if d.err == nil && l > len(d.s)-d.off {
			d.err = errTable
		}
		if d.err == nil {
			pool = append(pool, d.s[d.off:d.off+l])
			d.off += l
		}
	}
	str := func() string {
		i := d.count()
		if d.err == nil && i >= len(pool) {
			d.err = errTable
		}
		if d.err != nil {
			return ""
		}
		return pool[i]
	}
	probes, refs := d.count(), d.count()
	if d.err != nil {
		return nil, d.err
	}
	infos := make([]ProbeInfo, probes)
	types := make([]string, refs)
	list := func() []string {
		k := d.count()
		if d.err != nil || k == 0 {
			return nil
		}
		if k > len(types) {
			d.err = errTable
			return nil
		}
		l := types[:k:k]
		types = types[k:]
		for j := range l {
			l[j] = str()
		}
		return l
	}
	for i := range infos {
		in := &infos[i]
		in.Package, in.Recv, in.Name = str(), str(), str()
		in.RecvPtr = d.count()&1 != 0
		in.Params, in.Results = list(), list()
		in.File = str()
		in.Line = int(d.uvarint())
		in.Flags = uint32(d.uvarint())
		in.Cyclomatic, in.Statements = int(d.uvarint()), int(d.uvarint())
		if d.err != nil {
			return nil, d.err
		}
	}
	if d.off != len(d.s) {
		return nil, fmt.Errorf("%w: %d bytes after the last probe", errTable, len(d.s)-d.off)
	}
	return infos, nil
}

// tableReader reads a table's varints; the first error sticks.
type tableReader struct {
	s   string
	off int
	err error
}

// count reads a varint that counts or indexes something in the rest of the
// table, so it is at most the bytes left: a corrupt table cannot make the
// decoder allocate more than its length in elements.
func (d *tableReader) count() int {
	v := d.uvarint()
	if v > uint64(len(d.s)) {
		d.err = errTable
		return 0
	}
	return int(v)
}

// uvarint reads a number: a line, flags, a metric.
func (d *tableReader) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if d.off >= len(d.s) || shift > 63 {
			d.err = errTable
			return 0
		}
		b := d.s[d.off]
		d.off++
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v
		}
	}
}

// descs are the descriptions of one registration's probes (a package's, for
// generated code): given decoded (RegisterPackage, Register), or as the
// package's table, decoded at the first use of any of them.
type descs struct {
	table  string
	probes []Probe // the probes registered with the table
	first  uint32  // the id of the first of them
	once   sync.Once
	infos  []ProbeInfo
	// bad is set when the table did not decode: its probes stay off (modeOf).
	bad atomic.Bool
}

// decodedDescs holds descriptions given decoded.
func decodedDescs(infos []ProbeInfo) *descs {
	d := &descs{infos: infos}
	d.once.Do(func() {})
	return d
}

// givenDescs holds descriptions given decoded for probes; nil, reported, when
// they are not as many.
func givenDescs(probes []Probe, infos []ProbeInfo) *descs {
	if len(probes) != len(infos) {
		report(fmt.Errorf("register: %d probes but %d descriptions; probes stay off", len(probes), len(infos)))
		return nil
	}
	return decodedDescs(infos)
}

// tableDecodes counts the tables decoded, for TestRegisterConstantWork.
var tableDecodes atomic.Int64

// get returns the descriptions, decoding the table the first time.
func (d *descs) get() []ProbeInfo {
	d.once.Do(d.decode)
	return d.infos
}

func (d *descs) decode() {
	tableDecodes.Add(1)
	infos, err := decodeTable(d.table)
	if err == nil && len(infos) != len(d.probes) {
		err = fmt.Errorf("%d probes but %d descriptions", len(d.probes), len(infos))
	}
	if err == nil {
		d.infos = infos
		return
	}
	report(fmt.Errorf("register: %v; probes stay off", err))
	d.bad.Store(true)
	d.infos = make([]ProbeInfo, len(d.probes))
	for i := range d.infos {
		d.infos[i] = ProbeInfo{Package: "?", Name: fmt.Sprintf("undescribed%d", i)}
	}
	for i := range d.probes {
		d.probes[i].mode.Store(modeOff)
	}
}

// info returns the probe's description.
func (p *Probe) info() *ProbeInfo {
	d := p.descs
	return &d.get()[p.id-d.first]
}

// newPrivateProbe makes a probe that is never registered (calibration),
// described by info, with statistics of its own.
func newPrivateProbe(info *ProbeInfo) *Probe {
	p := &Probe{descs: decodedDescs([]ProbeInfo{*info})}
	p.stats.Store(newStripes())
	return p
}
