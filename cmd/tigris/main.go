// Command tigris instruments Go programs at build time and reads what they record.
// See README.md and docs/.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "tigris:", err)
		os.Exit(1)
	}
}
