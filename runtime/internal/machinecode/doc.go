// Package machinecode reads the stores in a function's machine code as the go
// command compiles it, for tests that check an order the compiler keeps but
// no Go rule states: the lock-free queues publish a record with a plain
// store on amd64, which is correct only while it follows the stores of the
// record's fields (writer/publish_amd64.go). Only tests import it.
package machinecode
