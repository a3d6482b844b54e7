package dash

import "strings"

// funcName is a signature without its parameters and results, as Go names a
// function in tracebacks: "example.com/shop.(*Store).Find" of
// "example.com/shop.(*Store).Find(int) (string, error)". A signature it cannot
// take apart is returned whole.
func funcName(sig string) string {
	depth := 0
	for i := 0; i < len(sig); i++ {
		switch c := sig[i]; c {
		case '[':
			depth++
		case ']':
			depth--
		case '(':
			if depth == 0 && i > 0 && (isIdent(sig[i-1]) || sig[i-1] == ']') {
				return sig[:i]
			}
		}
	}
	return sig
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// shortName drops the package path but its last element from a function's
// name: "shop.(*Store).Find" of "example.com/shop.(*Store).Find(int) error".
func shortName(sig string) string {
	name := funcName(sig)
	// The package path ends at the last slash before the first dot after it.
	if i := strings.LastIndexByte(pkgPart(name), '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// pkgPart is the part of a function name that can hold the package path:
// everything before a receiver's parenthesis or bracket.
func pkgPart(name string) string {
	if i := strings.IndexAny(name, "(["); i >= 0 {
		return name[:i]
	}
	return name
}

// patternOf is the pointcut that selects exactly the function with signature
// sig, as a rule for its mode.
func patternOf(sig string) string {
	return "execution(* " + funcName(sig) + "(..))"
}
