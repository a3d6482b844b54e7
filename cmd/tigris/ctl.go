package main

// tigris ctl: the command line of package adminclient. Each subcommand parses
// its flags, makes one or two client calls and prints a table; with --json the
// client passes the program's reply through instead.

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/adminclient"
)

// ctl is the state the subcommands share: the flags, then the client
// PersistentPreRunE makes from them.
type ctl struct {
	addr   string // as the user gave it, for messages
	token  string
	asJSON bool
	cmd    *cobra.Command // the subcommand running, for its output and context
	client *adminclient.Client
}

func newCtlCmd() *cobra.Command {
	c := &ctl{}
	cmd := &cobra.Command{
		Use:   "ctl",
		Short: "See and switch the monitoring of a running program (admin endpoint client)",
		Long: `ctl talks to the admin endpoint of a running instrumented program: list the
probes, add and remove mode rules, set the sampling rate and the analysis, read
the coarse statistics, the writer state and the Prometheus metrics.

The program serves the endpoint when it starts with TIGRIS_ADMIN=host:port (or
admin.listen in tigris.yaml). ctl connects to --addr, by default $TIGRIS_ADMIN or
` + adminclient.DefaultAddr + `. Changes need --token (default $TIGRIS_ADMIN_TOKEN) when the
program has a token. --json prints the endpoint's JSON reply instead of a table.
docs/admin-api.md describes every endpoint.

Every subcommand first names the program it talks to, in a header line:
"# petclinic (/srv/petclinic), pid 22403, go1.26.8, up 3m2s, at 127.0.0.1:7070"
("unknown program" for a program too old to name its binary). The line goes to
standard output before a table, and to standard error when standard output
carries JSON (--json) or a trace file (writer recent -o -). An address that
answers as something else than a tigris admin endpoint is an error that says so.`,
		Example: `  TIGRIS_ADMIN=127.0.0.1:7070 ./app &
  tigris ctl probes --match 'execution(* shop/repo.*(..))'
  tigris ctl rules add 'execution(* shop/repo.(*Store).Find*(..))' --mode fine
  tigris ctl sampling set 10%
  tigris ctl stats --sort total --top 10
  tigris ctl rules delete 0`,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			c.cmd = cmd
			if !cmd.Flags().Changed("token") {
				// Read here, not as the flag's default, so --help never prints it.
				c.token = os.Getenv("TIGRIS_ADMIN_TOKEN")
			}
			o := adminclient.Options{Token: c.token}
			if c.asJSON {
				o.Raw = cmd.OutOrStdout()
			}
			var err error
			if c.client, err = adminclient.New(c.addr, o); err != nil {
				return fmt.Errorf("--addr %w", err)
			}
			return c.header()
		},
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&c.addr, "addr", adminclient.AddrFromEnv(), "admin endpoint address, host:port or a URL")
	pf.StringVar(&c.token, "token", "", "bearer token for changes (default $TIGRIS_ADMIN_TOKEN)")
	pf.BoolVar(&c.asJSON, "json", false, "print the JSON reply")
	cmd.AddCommand(
		c.probesCmd(), c.rulesCmd(), c.enableCmd(), c.samplingCmd(), c.analysisCmd(),
		c.statsCmd(), c.writerCmd(), c.healthCmd(), c.metricsCmd(), c.authCmd(),
		c.queryCmd(), c.queriesCmd(),
	)
	return cmd
}

// header names the program at the address, on the first line of the output
// (docs/admin-api.md, "Which program"): on stdout before a table or text, on
// stderr when stdout carries JSON or a trace file, so that what reads them
// gets them unchanged. It fails when the address does not answer, or not as
// a tigris admin endpoint.
func (c *ctl) header() error {
	p, err := c.client.Program(c.ctx())
	if err != nil {
		return c.explain(err)
	}
	w := c.cmd.OutOrStdout()
	if out := c.cmd.Flags().Lookup("output"); c.asJSON || out != nil && out.Value.String() == "-" {
		w = c.cmd.ErrOrStderr()
	}
	_, err = fmt.Fprintf(w, "# %s\n", p)
	return err
}

// show prints a reply with print, unless the call failed or --json printed
// the reply already.
func show[T any](c *ctl, v *T, err error, print func(*T) error) error {
	if err != nil {
		return c.explain(err)
	}
	if c.asJSON {
		return nil
	}
	return print(v)
}

// explain adds what the user can do about a refusal on the command line.
func (c *ctl) explain(err error) error {
	var e *adminclient.Error
	if errors.As(err, &e) && e.Status == http.StatusUnauthorized && c.token == "" {
		e.Hint = "the program has a token: pass --token or set TIGRIS_ADMIN_TOKEN"
	}
	return err
}

// printf writes to the command's output.
func (c *ctl) printf(format string, args ...any) error {
	_, err := fmt.Fprintf(c.cmd.OutOrStdout(), format, args...)
	return err
}

// table writes aligned columns; rows are tab-separated. An empty header is
// left out (key/value listings).
func (c *ctl) table(header string, rows []string) error {
	tw := tabwriter.NewWriter(c.cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	if header != "" {
		fmt.Fprintln(tw, header)
	}
	for _, r := range rows {
		fmt.Fprintln(tw, r)
	}
	return tw.Flush()
}
