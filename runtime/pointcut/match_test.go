package pointcut

import (
	"testing"
)

// Signatures as the rewriter writes them: full import paths in types, "...T" for a
// variadic parameter.
var (
	clientDo = &Signature{
		Package: "net/http", Recv: "Client", RecvPtr: true, Name: "Do",
		Params:  []string{"*net/http.Request"},
		Results: []string{"*net/http.Response", "error"},
		Flags:   Exported | Method | ReturnsError,
	}
	storeFind = &Signature{
		Package: "example.com/shop/repo", Recv: "Store", RecvPtr: true, Name: "FindByID",
		Params:  []string{"context.Context", "int"},
		Results: []string{"*example.com/shop/model.Owner", "error"},
		Flags:   Exported | Method | ReturnsError,
	}
	storeFindAll = &Signature{
		Package: "example.com/shop/repo", Recv: "Store", RecvPtr: true, Name: "FindAll",
		Params:  []string{"context.Context"},
		Results: []string{"[]*example.com/shop/model.Owner", "error"},
		Flags:   Exported | Method | ReturnsError,
	}
	storeLen = &Signature{ // value receiver
		Package: "example.com/shop/repo", Recv: "Store", Name: "Len",
		Results: []string{"int"},
		Flags:   Exported | Method,
	}
	repoNew = &Signature{
		Package: "example.com/shop/repo", Name: "New",
		Params:  []string{"string"},
		Results: []string{"*example.com/shop/repo.Store"},
		Flags:   Exported,
	}
	repoHelper = &Signature{ // unexported, unnamed params in the source
		Package: "example.com/shop/repo", Name: "index",
		Params: []string{"map[string]int", "[]byte"},
	}
	authCheck = &Signature{
		Package: "example.com/shop/internal/auth", Name: "Check",
		Params:  []string{"context.Context", "string"},
		Results: []string{"error"},
		Flags:   Exported | ReturnsError,
	}
	shopRoot = &Signature{
		Package: "example.com/shop", Name: "Run",
		Params:  []string{"context.Context"},
		Results: []string{"error"},
		Flags:   Exported | ReturnsError,
	}
	mainMain   = &Signature{Package: "main", Name: "main"}
	serverRun  = &Signature{Package: "example.com/app/cmd/server", Name: "run", Results: []string{"error"}, Flags: ReturnsError | Main}
	treeInsert = &Signature{ // func (t *Tree[K]) Insert(k K) bool
		Package: "example.com/x", Recv: "Tree", RecvPtr: true, Name: "Insert",
		Params:  []string{"K"},
		Results: []string{"bool"},
		Flags:   Exported | Method | Generic,
	}
	listLen = &Signature{ // func (l List[T]) Len() int
		Package: "example.com/x", Recv: "List", Name: "Len",
		Results: []string{"int"},
		Flags:   Exported | Method | Generic,
	}
	mapFn = &Signature{ // func Map[T, U any](xs []T, f func(T) U) []U
		Package: "example.com/x", Name: "Map",
		Params:  []string{"[]T", "func(T) U"},
		Results: []string{"[]U"},
		Flags:   Exported | Generic,
	}
	logf = &Signature{
		Package: "example.com/x", Name: "Logf",
		Params: []string{"string", "...any"},
		Flags:  Exported | Variadic,
	}
	sumList = &Signature{
		Package: "example.com/x", Name: "Sum",
		Params:  []string{"example.com/x.List[int]"},
		Results: []string{"int"},
		Flags:   Exported,
	}
	group = &Signature{
		Package: "example.com/x", Name: "group",
		Params:  []string{"map[string][]*example.com/shop/model.Owner", "chan<- error", "func(int, string) (bool, error)"},
		Results: []string{"[4]byte"},
	}
	stringsIndex = &Signature{
		Package: "strings", Name: "Index",
		Params:  []string{"string", "string"},
		Results: []string{"int"},
		Flags:   Exported,
	}
	yamlMarshal = &Signature{
		Package: "gopkg.in/yaml.v3", Name: "Marshal",
		Params:  []string{"interface{}"},
		Results: []string{"[]byte", "error"},
		Flags:   Exported | ReturnsError,
	}
	chiRouter = &Signature{
		Package: "github.com/go-chi/chi/v5", Name: "NewRouter",
		Results: []string{"*github.com/go-chi/chi/v5.Mux"},
		Flags:   Exported,
	}
	podString = &Signature{
		Package: "k8s.io/api/core/v1", Recv: "Pod", RecvPtr: true, Name: "String",
		Params:  []string{"k8s.io/api/core/v1.PodSpec"},
		Results: []string{"string"},
		Flags:   Exported | Method,
	}
	serveHTTP = &Signature{
		Package: "example.com/shop/web", Recv: "Server", RecvPtr: true, Name: "ServeHTTP",
		Params: []string{"net/http.ResponseWriter", "*net/http.Request"},
		Flags:  Exported | Method,
	}
	testFind = &Signature{
		Package: "example.com/shop/repo", Name: "TestFind",
		Params: []string{"*testing.T"},
		Flags:  Exported | Test,
	}
)

func TestMatchExecution(t *testing.T) {
	tests := []struct {
		expr string
		sig  *Signature
		want bool
	}{
		// Receivers: "(*T)" is the method set of *T (pointer and value receivers),
		// "T" only value receivers, "(*)" any receiver.
		{`execution(* net/http.(*Client).Do(..))`, clientDo, true},
		{`execution(* net/http.Client.Do(..))`, clientDo, false},
		{`execution(* net/http.(*Client).Get(..))`, clientDo, false},
		{`execution(* example.com/shop/repo.(*Store).Find*(..))`, storeFind, true},
		{`execution(* example.com/shop/repo.(*Store).Find*(..))`, storeFindAll, true},
		{`execution(* example.com/shop/repo.(*Store).Find*(..))`, storeLen, false},
		{`execution(* example.com/shop/repo.(*Store).*(..))`, storeLen, true},
		{`execution(* example.com/shop/repo.Store.*(..))`, storeLen, true},
		{`execution(* example.com/shop/repo.(Store).*(..))`, storeLen, true},
		{`execution(* example.com/shop/repo.Store.*(..))`, storeFind, false},
		{`execution(* example.com/shop/repo.(*).*(..))`, storeFind, true},
		{`execution(* example.com/shop/repo.(*).*(..))`, repoNew, false},
		{`execution(* example.com/shop/repo.*.Len(..))`, storeLen, true},
		{`execution(* example.com/shop/repo.(**e).*(..))`, storeFind, true},
		{`execution(* example.com/shop/repo.(*Sto*).Find*(..))`, storeFind, true},
		{`execution(* example.com/shop/repo.(*Store).*(..)) && pointer_receiver()`, storeLen, false},

		// No receiver pattern: functions and methods alike.
		{`execution(* example.com/shop/repo.*(..))`, repoNew, true},
		{`execution(* example.com/shop/repo.*(..))`, storeFind, true},
		{`execution(* example.com/shop/repo.*(..)) && function()`, storeFind, false},
		{`execution(* example.com/shop/repo.*(..)) && method()`, storeFind, true},
		{`execution(* example.com/shop/repo.*(..))`, authCheck, false},

		// Packages: "*" one element, "..." any number (including none), a lone
		// "*" or "..." any package.
		{`execution(* example.com/shop/...*(..))`, authCheck, true},
		{`execution(* example.com/shop/....*(..))`, authCheck, true},
		{`execution(* example.com/shop/...*(..))`, shopRoot, true},
		{`execution(* example.com/shop/...*(..))`, clientDo, false},
		{`execution(* example.com/shop/*.*(..))`, storeFind, true},
		{`execution(* example.com/shop/*.*(..))`, authCheck, false},
		{`execution(* example.com/.../auth.Check(..))`, authCheck, true},
		{`execution(* example.com/.../auth.Check(..))`, storeFind, false},
		{`execution(* */http.*(..))`, clientDo, true},
		{`execution(* *.*(..))`, clientDo, true},
		{`execution(* *.*(..))`, mainMain, true},
		{`execution(* ..*(..))`, authCheck, true},
		{`execution(* ...*(..))`, yamlMarshal, true},
		{`execution(* main.main())`, mainMain, true},
		// A command's package is named by its import path and matched by main too.
		{`execution(* main.*(..))`, serverRun, true},
		{`execution(* example.com/app/cmd/server.*(..))`, serverRun, true},
		{`within(main)`, serverRun, true},
		{`within(main) && within(example.com/...)`, serverRun, true},
		{`execution(* main.*(..))`, repoNew, false},
		{`execution(* mai*.*(..))`, serverRun, false},
		{`execution(* main.*(..))`, storeFind, false},
		{`execution(* strings.Index(string, string))`, stringsIndex, true},
		{`execution(int strings.Index(..))`, stringsIndex, true},
		{`execution(* str*.Index(..))`, stringsIndex, true},
		{`execution(* "gopkg.in/yaml.v3".Marshal(..))`, yamlMarshal, true},
		{`execution(* "gopkg.in/*".Marshal(..))`, yamlMarshal, true},
		{`execution(* github.com/go-chi/chi/v5.NewRouter())`, chiRouter, true},

		// The REFERENCES example: name left out after "...".
		{`execution(error example.com/shop/...(context.Context, ..))`, authCheck, true},
		{`execution(error example.com/shop/...(context.Context, ..))`, shopRoot, true},
		{`execution(error example.com/shop/...(context.Context, ..))`, storeFind, false},

		// Parameters: ".." any number, "*" exactly one, "...T" variadic.
		{`execution(* example.com/shop/repo.*())`, storeLen, true},
		{`execution(* example.com/shop/repo.*())`, storeFind, false},
		{`execution(* example.com/shop/repo.*(*))`, storeFindAll, true},
		{`execution(* example.com/shop/repo.*(*))`, storeFind, false},
		{`execution(* example.com/shop/repo.*(*, *))`, storeFind, true},
		{`execution(* example.com/shop/repo.*(.., int))`, storeFind, true},
		{`execution(* example.com/shop/repo.*(context.Context, ..))`, storeFindAll, true},
		{`execution(* example.com/shop/repo.*(.., context.Context, ..))`, storeFind, true},
		{`execution(* example.com/shop/repo.*(.., string, ..))`, storeFind, false},
		{`execution(* example.com/x.Logf(string, ...any))`, logf, true},
		{`execution(* example.com/x.Logf(string, ...*))`, logf, true},
		{`execution(* example.com/x.Logf(string, any))`, logf, false},
		{`execution(* example.com/x.Logf(string, ...interface{}))`, logf, true},
		{`execution(* example.com/x.*(..)) && variadic()`, logf, true},
		{`execution(* example.com/x.*(..)) && variadic()`, mapFn, false},
		{`execution(* example.com/shop/repo.index(map[string]int, []byte))`, repoHelper, true},
		{`execution(* example.com/shop/repo.index(map[string]*, []*))`, repoHelper, true},
		{`execution(* example.com/shop/repo.index(map[*]string, ..))`, repoHelper, false},

		// Results: "*" any (also none), a type exactly one, a tuple exactly those.
		{`execution(* example.com/shop/repo.Store.Len())`, storeLen, true},
		{`execution(int example.com/shop/repo.Store.Len())`, storeLen, true},
		{`execution((int) example.com/shop/repo.Store.Len())`, storeLen, true},
		{`execution(error example.com/shop/repo.Store.Len())`, storeLen, false},
		{`execution(() example.com/x.Logf(..))`, logf, true},
		{`execution(() example.com/shop/repo.Store.Len())`, storeLen, false},
		{`execution((*, error) example.com/shop/repo.*(..))`, storeFind, true},
		{`execution((.., error) example.com/shop/repo.*(..))`, storeFind, true},
		{`execution((.., error) example.com/shop/repo.*(..))`, storeLen, false},
		{`execution(* example.com/shop/...*(..)) && returns_error()`, storeFind, true},
		{`execution(* example.com/shop/...*(..)) && returns_error()`, storeLen, false},

		// Full and short type names: "model.Owner" is any package named model.
		{`execution((*example.com/shop/model.Owner, error) example.com/shop/repo.*(..))`, storeFind, true},
		{`execution((*model.Owner, error) example.com/shop/repo.*(..))`, storeFind, true},
		{`execution((*other.Owner, error) example.com/shop/repo.*(..))`, storeFind, false},
		{`execution((*model.*, error) example.com/shop/repo.*(..))`, storeFind, true},
		{`execution((*example.com/shop/....Owner, error) example.com/shop/repo.*(..))`, storeFind, true},
		{`execution((*"example.com/shop/model".Owner, error) example.com/shop/repo.*(..))`, storeFind, true},
		{`execution((*"model".Owner, error) example.com/shop/repo.*(..))`, storeFind, false},
		{`execution((*model.Owner, error) example.com/shop/repo.*(..))`, storeFindAll, false},
		{`execution(([]*model.Owner, error) example.com/shop/repo.*(..))`, storeFindAll, true},
		{`execution((*Owner, error) example.com/shop/repo.*(..))`, storeFind, false},
		{`execution((**.Owner, error) example.com/shop/repo.*(..))`, storeFind, true},
		{`execution(* net/http.*(*http.Request))`, clientDo, true},
		{`execution(* net/http.*(*net/http.Request))`, clientDo, true},
		{`execution(* net/http.*(http.Request))`, clientDo, false},
		{`execution(*chi.Mux github.com/go-chi/...*(..))`, chiRouter, true},
		{`execution(* k8s.io/...*(v1.PodSpec))`, podString, true},
		{`execution(* k8s.io/...*(core.PodSpec))`, podString, true},
		{`execution(*yaml.Node *.*(..)) || execution(([]byte, error) *.*(yaml.Node))`, yamlMarshal, false},
		{`execution(* *.*(context.Context, ..))`, authCheck, true},
		{`execution(* *.*(http.ResponseWriter, *http.Request))`, serveHTTP, true},

		{`args(any)`, yamlMarshal, true},
		{`args(interface{})`, yamlMarshal, true},
		{`args(struct{})`, yamlMarshal, false},
		{`execution(*v5.Mux *.*(..))`, chiRouter, true},
		{`execution(*v4.Mux *.*(..))`, chiRouter, false},
		{`args(http.*Writer, ..)`, serveHTTP, true},
		{`args(http.*Request, ..)`, serveHTTP, false},
		{`args(*, *http.Req*)`, serveHTTP, true},
		{`within(*)`, mainMain, true},
		{`within( * ) && execution(* x.* (..))`, mainMain, false},
		{`within( * ) && execution(* main.* (..))`, mainMain, true},

		// Composite types.
		{`args(map[string][]*model.Owner, chan<- error, func(int, string) (bool, error))`, group, true},
		{`args(map[string][]*model.Owner, chan error, ..)`, group, false},
		{`args(map[string]*, chan<- *, func(..) (.., error))`, group, true},
		{`args(*, *, func(int, ..) *)`, group, false},
		{`args(.., func(*, *) (*, *))`, group, true},
		{`execution([4]byte *.*(..)) && execution([*]byte *.*(..))`, group, true},
		{`execution([]byte *.*(..))`, group, false},

		// Generics: brackets require type parameters; the receiver's base name matches
		// without them.
		{`execution(* example.com/x.(*Tree[...]).Insert(..))`, treeInsert, true},
		{`execution(* example.com/x.(*Tree[K]).Insert(K))`, treeInsert, true},
		{`execution(* example.com/x.(*Tree).Insert(..))`, treeInsert, true},
		{`execution(* example.com/x.(*Tree[...]).Insert(..))`, storeFind, false},
		{`execution(* example.com/x.List[...].Len())`, listLen, true},
		{`execution(* example.com/x.Map[...](..))`, mapFn, true},
		{`execution(* example.com/x.Map[T, U]([]T, func(T) U))`, mapFn, true},
		{`execution(* example.com/x.Logf[...](..))`, logf, false},
		{`execution(* example.com/x.*(..)) && generic()`, mapFn, true},
		{`execution(* example.com/x.*(..)) && generic() && function()`, treeInsert, false},
		{`execution(* example.com/x.Sum(example.com/x.List[int]))`, sumList, true},
		{`execution(* example.com/x.Sum(x.List[*]))`, sumList, true},
		{`execution(* example.com/x.Sum(x.List))`, sumList, true},
		{`execution(* example.com/x.Sum(x.List[string]))`, sumList, false},

		// within, args, predicates, composition.
		{`within(example.com/shop/...)`, authCheck, true},
		{`within(example.com/shop/...) && !within(example.com/shop/internal/...)`, authCheck, false},
		{`within(example.com/shop/...) && !within(example.com/shop/internal/...)`, storeFind, true},
		{`within(example.com/shop/repo.(*Store))`, storeLen, true},
		{`within(example.com/shop/repo.Store)`, storeFind, false},
		{`within(net/*)`, clientDo, true},
		{`within(strings)`, stringsIndex, true},
		{`args(context.Context, ..)`, storeFind, true},
		{`args()`, storeLen, true},
		{`args(..)`, storeLen, true},
		{`args(*)`, storeLen, false},
		{`exported()`, repoHelper, false},
		{`!exported()`, repoHelper, true},
		{`test()`, testFind, true},
		{`within(example.com/shop/...) && !test()`, testFind, false},
		{`execution(* example.com/shop/repo.New(..)) || execution(* net/http.(*Client).Do(..))`, clientDo, true},
		{`(execution(* *.*(..)) || within(x)) && !(method() && !exported())`, storeFind, true},
		{`!!exported()`, storeFind, true},
		{`all()`, mainMain, true},
		{`none() || all() && none()`, mainMain, false},
		{`call(* *.*(..))`, storeFind, false},
		{`withincode(* example.com/shop/repo.*(..))`, storeFind, true},
		{`withincode(* example.com/shop/repo.*(..)) || call(* *.*(..))`, storeFind, true},
		{`!call(* *.*(..))`, storeFind, true},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			p, err := Parse(tt.expr)
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.MatchExecution(tt.sig), "%s on %v", p, tt.sig)
			// The canonical text means the same.
			q, err := Parse(p.String())
			require.NoError(t, err, "canonical text %q", p.String())
			assert.Equal(t, tt.want, q.MatchExecution(tt.sig), "canonical %s", q)
		})
	}
}

func TestMatchCall(t *testing.T) {
	tests := []struct {
		expr           string
		callee, caller *Signature
		want           bool
	}{
		{`call(* net/http.(*Client).Do(..))`, clientDo, storeFind, true},
		{`call(* net/http.(*Client).Do(..))`, storeFind, clientDo, false},
		// within and withincode test the caller; execution is false at a call.
		{`call(* net/http.*(..)) && within(example.com/shop/...)`, clientDo, storeFind, true},
		{`call(* net/http.*(..)) && within(example.com/shop/...)`, clientDo, stringsIndex, false},
		{`call(* net/http.*(..)) && withincode(* example.com/shop/repo.(*Store).Find*(..))`, clientDo, storeFindAll, true},
		{`call(* net/http.*(..)) && withincode(* example.com/shop/repo.(*Store).Find*(..))`, clientDo, storeLen, false},
		{`call(* net/http.*(..)) && !withincode(* example.com/shop/repo.(*Store).Find*(..))`, clientDo, storeLen, true},
		{`execution(* example.com/shop/repo.*(..)) || call(* net/http.*(..))`, clientDo, storeFind, true},
		{`execution(* example.com/shop/repo.*(..)) || call(* net/http.*(..))`, stringsIndex, storeFind, false},
		// args and predicates test the callee.
		{`call(* *.*(..)) && args(*net/http.Request)`, clientDo, storeFind, true},
		{`call(* *.*(..)) && args(context.Context, ..)`, clientDo, storeFind, false},
		{`call(* *.*(..)) && returns_error() && method()`, clientDo, mainMain, true},
		{`call(* *.*(..)) && !exported()`, clientDo, mainMain, false},
		// The call term must be what selects the call.
		{`within(example.com/shop/...)`, clientDo, storeFind, false},
		{`execution(* *.*(..))`, clientDo, storeFind, false},
		{`withincode(* *.*(..))`, clientDo, storeFind, false},
		{`!call(* strings.*(..))`, clientDo, storeFind, false},
		{`call(* net/http.*(..)) || within(example.com/shop/...)`, clientDo, storeFind, false},
		{`call(* net/http.*(..)) || within(example.com/shop/...)`, clientDo, mainMain, true},
		{`call(* *.*(..)) && !call(* strings.*(..))`, clientDo, storeFind, true},
		{`call(* *.*(..)) && !call(* strings.*(..))`, stringsIndex, storeFind, false},
		{`all() && call(* strings.Index(..))`, stringsIndex, mainMain, true},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			p, err := Parse(tt.expr)
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.MatchCall(tt.callee, tt.caller), "%s: call %v from %v", p, tt.callee, tt.caller)
		})
	}
}

func TestMayMatchPackage(t *testing.T) {
	tests := []struct {
		expr string
		pkg  string
		want bool
	}{
		{`execution(* example.com/shop/...*(..))`, "example.com/shop/repo", true},
		{`execution(* example.com/shop/...*(..))`, "strings", false},
		{`execution(* example.com/shop/...*(..)) && !within(example.com/shop/internal/...)`, "example.com/shop/internal/auth", false},
		{`execution(* example.com/shop/...*(..)) && !within(example.com/shop/internal/...)`, "example.com/shop/repo", true},
		{`within(main)`, "main", true},
		{`within(main)`, "fmt", false},
		{`exported()`, "fmt", true},
		{`!within(example.com/...)`, "example.com/x", false},
		{`none()`, "fmt", false},
		// A call(...) term can match a call written in any package.
		{`call(* net/http.*(..))`, "example.com/shop/repo", true},
		{`call(* net/http.*(..)) && within(example.com/shop/...)`, "fmt", false},
		{`call(* net/http.*(..)) && within(example.com/shop/...)`, "example.com/shop/repo", true},
		{`call(* net/http.*(..)) && withincode(* example.com/shop/repo.*(..))`, "example.com/shop/web", false},
		{`call(* net/http.*(..)) && withincode(* example.com/shop/repo.*(..))`, "example.com/shop/repo", true},
		{`execution(* example.com/shop/repo.*(..)) || call(* net/http.*(..))`, "example.com/shop/web", true},
		{`call(* net/http.*(..)) || within(fmt)`, "fmt", true},
		{`within(fmt) && !call(* net/http.*(..))`, "example.com/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.expr+" "+tt.pkg, func(t *testing.T) {
			p, err := Parse(tt.expr)
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.MayMatchPackage(tt.pkg))
		})
	}
	// A command: the pattern main matches it whatever its path.
	for _, tt := range []struct {
		expr string
		want bool
	}{
		{`execution(* main.*(..))`, true},
		{`within(main) && within(example.com/...)`, true},
		{`!within(main)`, false},
		{`within(fmt)`, false},
	} {
		p, err := Parse(tt.expr)
		require.NoError(t, err)
		assert.Equal(t, tt.want, p.MayMatchPackageOf("example.com/app/cmd/server", true), tt.expr)
		assert.False(t, p.MayMatchPackageOf("example.com/app/cmd/server", false) && tt.expr == `execution(* main.*(..))`, tt.expr)
	}
}

// TestMayMatchPackageIsSound checks the prefilter against the matcher: whenever a
// fixture matches, MayMatchPackage of its package is true.
func TestMayMatchPackageIsSound(t *testing.T) {
	sigs := []*Signature{clientDo, storeFind, storeFindAll, storeLen, repoNew, repoHelper, authCheck, shopRoot,
		mainMain, serverRun, treeInsert, listLen, mapFn, logf, sumList, group, stringsIndex, yamlMarshal, chiRouter, podString,
		serveHTTP, testFind}
	exprs := []string{
		`execution(* example.com/shop/...*(..)) && !within(example.com/shop/internal/...)`,
		`!within(example.com/...) || exported()`,
		`call(* *.*(..)) && !within(example.com/shop/...)`,
		`call(* net/http.*(..)) || execution(* example.com/x.*(..))`,
		`!(within(strings) || within(net/http)) && !call(* *.*(..))`,
		`within(example.com/shop/repo.(*Store)) && call(* *.*(..))`,
		`within(example.com/...) && within(main)`,
		`!within(main) && exported()`,
	}
	for _, expr := range exprs {
		p, err := Parse(expr)
		require.NoError(t, err)
		for _, s := range sigs {
			if p.MatchExecution(s) {
				assert.True(t, p.MayMatchPackageOf(s.Package, s.Flags.Has(Main)), "%s: execution of %v matches", expr, s)
			}
			for _, callee := range sigs {
				if p.MatchCall(callee, s) {
					assert.True(t, p.MayMatchPackageOf(s.Package, s.Flags.Has(Main)), "%s: call of %v in %v matches", expr, callee, s)
				}
			}
		}
	}
}

func TestCombinators(t *testing.T) {
	repo := mustParse(t, `execution(* example.com/shop/repo.*(..))`)
	internal := mustParse(t, `within(example.com/shop/internal/...)`)
	calls := mustParse(t, `call(* net/http.*(..))`)

	p := And(Or(repo, calls), Not(internal))
	assert.Equal(t, `(execution(* example.com/shop/repo.*(..)) || call(* net/http.*(..))) && !within(example.com/shop/internal/...)`, p.String())
	assert.True(t, p.HasCall())
	assert.True(t, p.MatchExecution(storeFind))
	assert.True(t, p.MatchCall(clientDo, storeFind))
	assert.False(t, p.MatchCall(clientDo, authCheck))

	// Empty and nil arguments: include && !exclude with nothing excluded.
	assert.Equal(t, repo.String(), And(Or(repo), Not(Or())).String())
	assert.Equal(t, "none()", Or().String())
	assert.Equal(t, "all()", And().String())
	assert.Equal(t, "none()", And(repo, nil).String())
	assert.Equal(t, repo.String(), Or(nil, repo).String())
	assert.Equal(t, "all()", Not(nil).String())
	assert.True(t, Not(nil).MatchExecution(mainMain))
	assert.False(t, Not(repo).HasCall())

	var zero Pointcut
	assert.False(t, zero.MatchExecution(mainMain))
	assert.False(t, zero.MayMatchPackage("main"))
	assert.Equal(t, "none()", zero.String())
	assert.Equal(t, "all()", Not(&zero).String())

	var none *Pointcut
	assert.False(t, none.MatchExecution(mainMain))
	assert.False(t, none.MatchCall(clientDo, mainMain))
	assert.False(t, none.HasCall())
	assert.False(t, none.MayMatchPackage("main"))
	assert.Equal(t, "none()", none.String())
	assert.False(t, repo.MatchExecution(nil))
	assert.False(t, calls.MatchCall(nil, storeFind))
}

func TestString(t *testing.T) {
	tests := []struct{ expr, want string }{
		{`execution(strings.Index(..))`, `execution(* strings.Index(..))`},
		{`execution( *   example.com/shop/....*( .. ) )`, `execution(* example.com/shop/...*(..))`},
		{`execution(error example.com/shop/...(context.Context,..))`, `execution(error example.com/shop/...*(context.Context, ..))`},
		{`execution(* ..*(...))`, `execution(* ...*(..))`},
		{`execution(* x.(**).F(..))`, `execution(* x.(*).F(..))`},
		{`execution(* x.(Store).F(..))`, `execution(* x.Store.F(..))`},
		{`execution(* x.(*Tree[K, V]).F(..))`, `execution(* x.(*Tree[...]).F(..))`},
		{`execution((func()) x.F(..))`, `execution((func()) x.F(..))`},
		{`execution((error) x.F(..))`, `execution((error) x.F(..))`},
		{`execution([]*  x.F(**,*))`, `execution([]* x.F(**, *))`},
		{`a || (b || c) && d`, `a || (b || c) && d`},
		{`(a && b) && !(c) || (d)`, `a && b && !c || d`},
		{`!(a || b)`, `!(a || b)`},
		{`all() && a || none()`, `a`},
	}
	env, err := NewEnv([]Named{
		{"a", `within(a)`}, {"b", `within(b)`}, {"c", `within(c)`}, {"d", `within(d)`},
	})
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			p, err := env.Parse(tt.expr)
			require.NoError(t, err)
			want, err := env.Parse(tt.want)
			require.NoError(t, err)
			assert.Equal(t, want.String(), p.String())
			q, err := Parse(p.String())
			require.NoError(t, err)
			assert.Equal(t, p.String(), q.String())
		})
	}
	p, err := env.Parse(`a && !(b || c)`)
	require.NoError(t, err)
	assert.Equal(t, `within(a) && !(within(b) || within(c))`, p.String())
}

func TestSignatureString(t *testing.T) {
	assert.Equal(t, "func (*example.com/shop/repo.Store).FindByID(context.Context, int) (*example.com/shop/model.Owner, error)", storeFind.String())
	assert.Equal(t, "func (example.com/shop/repo.Store).Len() int", storeLen.String())
	assert.Equal(t, "func example.com/x.Logf(string, ...any)", logf.String())
}

func TestMatchDoesNotAllocate(t *testing.T) {
	p := mustParse(t, `(execution(* example.com/shop/...(*Store).Find*(context.Context, ..)) || `+
		`execution((*model.Owner, error) *.*(..)) || call(* net/http.*(*http.Request)) || args(map[string]*, []*, func(..) (.., error))) && `+
		`!within(example.com/shop/internal/...) && exported() && !test()`)
	sigs := []*Signature{storeFind, group, clientDo, authCheck, yamlMarshal, chiRouter}
	allocs := testing.AllocsPerRun(100, func() {
		for _, s := range sigs {
			p.MatchExecution(s)
			p.MatchCall(s, storeFind)
		}
		p.MayMatchPackage("example.com/shop/repo")
	})
	if allocs != 0 {
		t.Errorf("got %v alloc(s); want 0", allocs)
	}
}

func BenchmarkMatchExecution(b *testing.B) {
	p, err := Parse(`execution(* example.com/shop/...*(..)) && !within(example.com/shop/internal/...) && exported() || call(* net/http.*(..))`)
	if err != nil {
		b.Fatal(err)
	}
	sigs := []*Signature{storeFind, clientDo, authCheck, group}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.MatchExecution(sigs[i%len(sigs)])
	}
}

func mustParse(t *testing.T, expr string) *Pointcut {
	t.Helper()
	p, err := Parse(expr)
	require.NoError(t, err)
	return p
}

func TestPackagePatterns(t *testing.T) {
	tests := []struct {
		pattern string
		path    string
		want    bool
	}{
		{`example.com/shop/...`, "example.com/shop", true},
		{`example.com/shop/...`, "example.com/shop/repo/sql", true},
		{`example.com/shop/...`, "example.com/shopping", false},
		{`example.com/.../sql`, "example.com/shop/repo/sql", true},
		{`example.com/.../sql`, "example.com/sql", true},
		{`example.com/.../sql`, "example.com/sql/x", false},
		{`.../internal/...`, "example.com/shop/internal/auth", true},
		{`.../internal/...`, "internal/cpu", true},
		{`.../internal/...`, "example.com/internals", false},
		{`*/http`, "net/http", true},
		{`*/http`, "example.com/x/http", false},
		{`example.com/*/repo`, "example.com/shop/repo", true},
		{`example.com/sh*p/re*`, "example.com/shop/repo", true},
		{`example.com/sh*p/re*`, "example.com/shop/x/repo", false},
		{`"gopkg.in/yaml.v3"`, "gopkg.in/yaml.v3", true},
		{`"gopkg.in/yaml.*"`, "gopkg.in/yaml.v3", true},
		{`main`, "main", true},
		{`main`, "example.com/cmd/main", false},
		{`*`, "example.com/a/b", true},
		{`..`, "x", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" "+tt.path, func(t *testing.T) {
			p := mustParse(t, `within(`+tt.pattern+`)`)
			assert.Equal(t, tt.want, p.MatchExecution(&Signature{Package: tt.path, Name: "F"}))
			assert.Equal(t, tt.want, p.MayMatchPackage(tt.path))
		})
	}

	// Short qualifiers in types are package names.
	short := []struct {
		qualifier, path string
		want            bool
	}{
		{"model", "example.com/shop/model", true},
		{"model", "model", true},
		{"model", "example.com/model/x", false},
		{"chi", "github.com/go-chi/chi/v5", true},
		{"v5", "github.com/go-chi/chi/v5", true},
		{"yaml", "gopkg.in/yaml.v3", true},
		{"yaml", "gopkg.in/yaml.vx", false},
		{"v1", "k8s.io/api/core/v1", true},
		{"core", "k8s.io/api/core/v1", true},
		{"mod*", "example.com/shop/model", true},
	}
	for _, tt := range short {
		t.Run(tt.qualifier+" "+tt.path, func(t *testing.T) {
			p := mustParse(t, `args(`+tt.qualifier+`.T)`)
			assert.Equal(t, tt.want, p.MatchExecution(&Signature{Params: []string{tt.path + ".T"}}))
		})
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"Find", "Find", true},
		{"Find", "FindAll", false},
		{"Find*", "Find", true},
		{"*All", "FindAll", true},
		{"*All", "Al", false},
		{"Get*By*", "GetOwnerByID", true},
		{"Get*By*", "GetOwner", false},
		{"*a*a*", "banana", true},
		{"a*a", "a", false},
		{"a*a", "aa", true},
		{"**x", "x", true},
	}
	for _, tt := range tests {
		g := newGlob(tt.pattern)
		assert.Equal(t, tt.want, g.match(tt.s), "%q ~ %q", tt.pattern, tt.s)
	}
}

// TestNamesExactly: only an execution term that writes out package, receiver
// and name, outside a negation, names a function.
func TestNamesExactly(t *testing.T) {
	cases := []struct {
		expr string
		sig  *Signature
		want bool
	}{
		{"execution(* example.com/shop/repo.(*Store).FindByID(..))", storeFind, true},
		{"execution(* example.com/shop/repo.FindByID(..))", storeFind, true},
		{"execution(* example.com/shop/repo.New(..)) || within(example.com/x)", repoNew, true},
		{"execution(* example.com/shop/repo.New(..)) && !execution(* *.String())", repoNew, true},
		{"execution(* example.com/shop/repo.(*Store).FindByID(..))", storeFindAll, false},
		{"execution(* example.com/shop/repo.(*Store).Find*(..))", storeFind, false},
		{"execution(* example.com/shop/repo.(*S*).FindByID(..))", storeFind, false},
		{"execution(* example.com/shop/....FindByID(..))", storeFind, false},
		{"execution(* *.FindByID(..))", storeFind, false},
		{"within(example.com/shop/repo)", storeFind, false},
		{"!execution(* example.com/shop/repo.New(..))", repoHelper, false},
		{"withincode(* example.com/shop/repo.New(..))", repoNew, false},
	}
	for _, c := range cases {
		p, err := Parse(c.expr)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		if got := p.NamesExactly(c.sig); got != c.want {
			t.Errorf("%s names %s exactly: %v, want %v", c.expr, c.sig.Name, got, c.want)
		}
	}
}
