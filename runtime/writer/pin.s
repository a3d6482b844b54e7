// Empty: lets pin.go declare the body-less functions that go:linkname binds to the
// runtime (the compiler rejects body-less functions in packages without assembly).
