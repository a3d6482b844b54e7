module github.com/tigrisgo/tigris/runtime

// The runtime module is what instrumented binaries link, so it is part of every
// user's module graph. Its go line stays at 1.18 (generics, which participle
// needs): the go command raises a requiring module's go line to a dependency's
// only from 1.21 on, so any user go line is kept. Check before raising it.
go 1.18

require github.com/alecthomas/participle/v2 v2.1.4
