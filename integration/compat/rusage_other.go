//go:build !unix

package compat

import "os"

// maxRSS is unknown here.
func maxRSS(*os.ProcessState) int64 { return 0 }
