package main

// tigris ctl writer recent and tigris ctl auth: the two calls tigris dash
// makes beyond the tables of the other subcommands.

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
)

func (c *ctl) writerRecentCmd() *cobra.Command {
	var out string
	var size int
	cmd := &cobra.Command{
		Use:   "recent [-o FILE] [--bytes N]",
		Short: "Save the recent fine records as a trace file",
		Long: `recent saves the program's recent fine records (the end of its current trace
file, with the header and every probe definition) as a trace file that tigris
read, stats, convert and dash open. --bytes bounds the records taken from the
end of the file (the program's default: 1 MiB; at most 4 MiB).`,
		Example: `  tigris ctl writer recent -o recent.tgr && tigris stats recent.tgr`,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if c.asJSON {
				return errors.New("writer recent writes a trace file; --json does not apply")
			}
			data, err := c.client.Recent(c.ctx(), size)
			if err != nil {
				return c.explain(err)
			}
			if out == "-" {
				_, err := c.cmd.OutOrStdout().Write(data)
				return err
			}
			if err := os.WriteFile(out, data, 0o644); err != nil {
				return err
			}
			return c.printf("wrote %s (%s)\n", out, human.Bytes(int64(len(data))))
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "recent.tgr", "file to write (- for standard output)")
	cmd.Flags().IntVar(&size, "bytes", 0, fmt.Sprintf("bytes from the end of the trace file, 1 to %d (0: the program's default)", admin.MaxRecentBytes))
	return cmd
}

func (c *ctl) authCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "auth",
		Short: "Check whether changes would be accepted (the token), changing nothing",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			st, err := c.client.Auth(c.ctx())
			return show(c, st, err, func(st *admin.AuthState) error {
				if st.TokenRequired {
					return c.printf("authorized: the program has a token and accepts this one\n")
				}
				return c.printf("authorized: the program has no token (loopback)\n")
			})
		},
	}
}
