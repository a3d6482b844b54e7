package export

import (
	"crypto/sha1"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tigrisgo/tigris/internal/sorted"
)

// Resource attributes (semantic conventions 1.37.0): service.name,
// service.instance.id, host.name, process.pid, process.executable.path, and
// whatever Options.Attributes add. Traces take host, pid and binary from the
// trace file's header; metrics from the admin endpoint (its pid) and this
// machine, so both signals of one process carry the same resource. An admin
// endpoint on another machine gives no host.name or executable (they would
// be this machine's), and its address stands for the host in
// service.instance.id: set --service-name there.

// instanceNamespace is the UUID namespace the conventions give for
// service.instance.id derived from other identifiers (version 5 UUIDs).
var instanceNamespace = [16]byte{0x4d, 0x63, 0x00, 0x9a, 0x8d, 0x0f, 0x11, 0xee, 0xaa, 0xd7, 0x4c, 0x79, 0x6e, 0xd8, 0xe3, 0x20}

// InstanceID is the default service.instance.id of process pid on host: a
// version 5 UUID of "host/pid", the same for its traces and its metrics and
// for every shipper that exports it.
func InstanceID(host string, pid int) string {
	h := sha1.New()
	h.Write(instanceNamespace[:])
	h.Write([]byte(host + "/" + strconv.Itoa(pid)))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// resourceAttrs are the resource attributes of process pid on host running
// binary ("" when unknown), sorted by key. host names the machine in
// service.instance.id; hostName is host.name ("" when unknown).
func resourceAttrs(o *Options, host, hostName string, pid int, binary string) []kv {
	attrs := map[string]kv{}
	for k, v := range o.Attributes {
		attrs[k] = kv{key: k, s: v}
	}
	set := func(k, v string) {
		if v != "" {
			attrs[k] = kv{key: k, s: v}
		}
	}
	name := o.ServiceName
	if name == "" {
		name = attrs["service.name"].s
	}
	if name == "" && binary != "" {
		name = strings.TrimSuffix(filepath.Base(binary), ".exe")
	}
	if name == "" {
		name = "unknown_service"
	}
	set("service.name", name)
	if o.InstanceID != "" {
		set("service.instance.id", o.InstanceID)
	} else if _, ok := o.Attributes["service.instance.id"]; !ok {
		set("service.instance.id", InstanceID(host, pid))
	}
	set("host.name", hostName)
	set("process.executable.path", binary)
	if pid > 0 {
		attrs["process.pid"] = kv{key: "process.pid", i: int64(pid), isInt: true}
	}
	out := make([]kv, 0, len(attrs))
	for _, k := range sorted.Keys(attrs) {
		out = append(out, attrs[k])
	}
	return out
}

func (s *shipper) resource(host string, pid int, binary string) []kv {
	return resourceAttrs(&s.o, host, host, pid, binary)
}
