package traceconv

import (
	"bufio"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Kieker's file-system monitoring log is a directory holding kieker.map, which
// maps the "$N" record-type keys to record classes, and .dat files with one record
// per line, fields separated by ';' (Kieker user guide, "Monitoring log").
// OperationExecutionRecord lines are
//
//	$1;loggingTimestamp;operationSignature;sessionId;traceId;tin;tout;hostname;eoi;ess
//
// and the KiekerMetadataRecord line that opens each stream is
//
//	$0;loggingTimestamp;version;controllerName;hostname;experimentId;debugMode;timeOffset;timeUnit;numberOfRecords
const (
	// KiekerMap is the content of kieker.map for the .dat files Kieker writes.
	KiekerMap = "$0=kieker.common.record.misc.KiekerMetadataRecord\n" +
		"$1=kieker.common.record.controlflow.OperationExecutionRecord\n"
	// KiekerVersion is the Kieker version whose record layouts the .dat lines follow.
	KiekerVersion = "1.15"
	// kiekerNoSession is Kieker's session id for records without a session.
	kiekerNoSession = "<no-session-id>"
)

// writeKieker writes Kieker ASCII records, the content of a .dat file of a Kieker
// monitoring log (see KiekerMap): per stream a metadata record (time unit
// NANOSECONDS, controller "tigris-BINARY", the host), then one
// OperationExecutionRecord per call, in file order. Times are Unix nanoseconds;
// loggingTimestamp is the call's exit time; the trace id is the stream's (offset
// by stream<<40 when several processes are converted together), and eoi/ess are
// the record's own, which is what Kieker's trace reconstruction expects. It
// streams.
func writeKieker(w io.Writer, r *writer.Reader, opt Options) (Report, error) {
	var rep Report
	bw := bufio.NewWriterSize(w, 256<<10)
	var sigs []string
	var buf []byte
	sc := scanner{
		opt: opt,
		rep: &rep,
		onStream: func(s *stream) error {
			if s.hdr == nil {
				return nil
			}
			b := append(buf[:0], "$0;"...)
			b = strconv.AppendInt(b, s.hdr.Start, 10)
			b = append(b, ';')
			b = append(b, KiekerVersion...)
			b = append(b, ";tigris-"...)
			b = append(b, kiekerField(nameOr(filepath.Base(s.hdr.Binary), "process"))...)
			b = append(b, ';')
			b = append(b, kiekerField(s.hdr.Host)...)
			b = append(b, ";1;false;0;NANOSECONDS;0\n"...)
			buf = b
			_, err := bw.Write(b)
			return err
		},
		onRecord: func(s *stream, p *probe, r *writer.Record) error {
			if p.idx < 0 {
				p.idx = len(sigs)
				sigs = append(sigs, kiekerSignature(p))
			}
			b := append(buf[:0], "$1;"...)
			b = strconv.AppendInt(b, s.wall(r.TOut), 10)
			b = append(b, ';')
			b = append(b, sigs[p.idx]...)
			b = append(b, ';')
			b = append(b, kiekerNoSession...)
			b = append(b, ';')
			b = strconv.AppendUint(b, s.traceID(r.Trace), 10)
			b = append(b, ';')
			b = strconv.AppendInt(b, s.wall(r.TIn), 10)
			b = append(b, ';')
			b = strconv.AppendInt(b, s.wall(r.TOut), 10)
			b = append(b, ';')
			b = append(b, kiekerField(s.host())...)
			b = append(b, ';')
			b = strconv.AppendUint(b, uint64(r.EOI), 10)
			b = append(b, ';')
			b = strconv.AppendUint(b, uint64(r.ESS), 10)
			b = append(b, '\n')
			buf = b
			_, err := bw.Write(b)
			return err
		},
	}
	if err := sc.run(r); err != nil {
		return rep, err
	}
	return rep, bw.Flush()
}

// kiekerField keeps a value from splitting its line or field.
func kiekerField(s string) string {
	if !strings.ContainsAny(s, ";\n\r") {
		return s
	}
	return strings.NewReplacer(";", ",", "\n", " ", "\r", " ").Replace(s)
}
