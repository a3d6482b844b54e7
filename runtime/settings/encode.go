package settings

import (
	"encoding/json"
	"fmt"
)

// Format is the version of Encode's output. Decode rejects any other version, so a
// binary whose embedded settings came from an incompatible tigris says so at start
// instead of misreading them.
const Format = 1

// encoded is the JSON shape of Encode: Runtime's fields next to "format".
type encoded struct {
	Format int `json:"format"`
	Runtime
}

// Encode validates r and returns it as one line of JSON, the string the rewriter
// embeds in an instrumented binary. The output is deterministic (map keys sorted),
// so equal settings encode to equal strings.
func (r *Runtime) Encode() (string, error) {
	if err := r.Validate(); err != nil {
		return "", fmt.Errorf("encoding settings: %w", err)
	}
	b, err := json.Marshal(encoded{Format: Format, Runtime: *r})
	if err != nil {
		return "", fmt.Errorf("encoding settings: %w", err)
	}
	return string(b), nil
}

// Decode parses a string made by Encode and validates the result. Fields the string
// does not mention keep their zero value, not Default's: Encode writes every field
// whose zero value is not meaningful. Unknown fields are ignored.
func Decode(s string) (Runtime, error) {
	e, ok := decodeFast(s)
	if !ok {
		e = encoded{}
		if err := json.Unmarshal([]byte(s), &e); err != nil {
			return Runtime{}, fmt.Errorf("decoding settings: %w", err)
		}
	}
	if e.Format != Format {
		return Runtime{}, fmt.Errorf("decoding settings: format %d, want %d (the binary was built by an incompatible tigris)", e.Format, Format)
	}
	if err := e.Runtime.Validate(); err != nil {
		return Runtime{}, fmt.Errorf("decoding settings: %w", err)
	}
	return e.Runtime, nil
}
