package adminclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor/admin"
)

// Program is the program that answers at a client's address, as its health
// reply describes it: what `tigris ctl` names in the header of every output.
type Program struct {
	// Addr is the address the client was made with.
	Addr string
	// Binary is the program's executable, "" when the program does not say
	// (a program built before health named it, or a system that does not
	// tell a process its executable).
	Binary string
	PID    int
	Go     string // runtime.Version() of the program
	Uptime time.Duration
}

// String names the program in one line: "petclinic (/srv/petclinic), pid
// 22403, go1.26.8, up 3m2s, at 127.0.0.1:7070"; "unknown program, pid 22403,
// ..." when it does not name its binary.
func (p *Program) String() string {
	name := "unknown program"
	if p.Binary != "" {
		name = filepath.Base(p.Binary) + " (" + p.Binary + ")"
	}
	s := fmt.Sprintf("%s, pid %d", name, p.PID)
	if p.Go != "" {
		s += ", " + p.Go
	}
	return s + fmt.Sprintf(", up %s, at %s", p.Uptime.Round(time.Second), p.Addr)
}

// NotAdminError is the error of Program when the address answers but not as a
// tigris admin endpoint: another server listens there.
type NotAdminError struct {
	Addr string
	// Why is what the address answered instead: a status, or a reply that is
	// not a tigris health reply.
	Why string
}

func (e *NotAdminError) Error() string {
	return fmt.Sprintf("%s answers, but it is not a tigris admin endpoint (GET %shealth: %s); pass the address of the program's endpoint with --addr or TIGRIS_ADMIN",
		e.Addr, admin.Prefix, e.Why)
}

// Program asks the program at the client's address which program it is (GET
// health; the reply is not given to Options.Raw). An address that answers but
// is no tigris admin endpoint gives a [*NotAdminError]; one that cannot be
// reached, the error every request gets.
func (c *Client) Program(ctx context.Context) (*Program, error) {
	quiet := *c
	quiet.opt.Raw = nil
	data, err := quiet.do(ctx, "GET", admin.Prefix+"health", nil, nil, "")
	if e := (*Error)(nil); errors.As(err, &e) {
		why := fmt.Sprint(e.Status, " ", http.StatusText(e.Status))
		if e.Status < 500 {
			// Health takes no token and every tigris program serves it.
			return nil, &NotAdminError{Addr: c.addr, Why: why}
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	var h admin.Health
	if json.Unmarshal(data, &h) != nil || h.Status != "ok" || h.PID <= 0 {
		return nil, &NotAdminError{Addr: c.addr, Why: "the reply is not a tigris health reply"}
	}
	return &Program{Addr: c.addr, Binary: h.Binary, PID: h.PID, Go: h.Go,
		Uptime: time.Duration(h.UptimeSeconds * float64(time.Second))}, nil
}
