package pointcut

import (
	"errors"
	"testing"

	"github.com/alecthomas/participle/v2"
)

func TestEnv(t *testing.T) {
	// Names may be used before they are defined.
	env, err := NewEnv([]Named{
		{"app", `repo && !internal`},
		{"repo", `execution(* example.com/shop/...*(..)) && exported()`},
		{"internal", `within(example.com/shop/internal/...)`},
		{"outbound", `call(* net/http.(*Client).*(..)) && within(example.com/shop/...)`},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"app", "repo", "internal", "outbound"}, env.Names())

	p, err := env.Parse(`app || outbound`)
	require.NoError(t, err)
	assert.Equal(t, `execution(* example.com/shop/...*(..)) && exported() && !within(example.com/shop/internal/...) || `+
		`call(* net/http.(*Client).*(..)) && within(example.com/shop/...)`, p.String())
	assert.True(t, p.MatchExecution(storeFind))
	assert.False(t, p.MatchExecution(authCheck))
	assert.False(t, p.MatchExecution(repoHelper))
	assert.True(t, p.MatchCall(clientDo, storeFind))
	assert.False(t, p.MatchCall(clientDo, mainMain))
	assert.True(t, p.HasCall())

	q, expr, ok := env.Lookup("repo")
	require.True(t, ok)
	assert.Equal(t, `execution(* example.com/shop/...*(..)) && exported()`, expr)
	assert.False(t, q.HasCall())
	_, _, ok = env.Lookup("nope")
	assert.False(t, ok)

	_, err = env.Parse(`app && nope`)
	assertParseError(t, err, 8, `unknown pointcut "nope"; defined: app, internal, outbound, repo`)

	// A nil Env has no names.
	var none *Env
	_, err = none.Parse(`app`)
	assertParseError(t, err, 1, `unknown pointcut "app": no named pointcuts are defined`)
	assert.Nil(t, none.Names())
}

func TestNewEnvErrors(t *testing.T) {
	tests := []struct {
		name  string
		named []Named
		// want is, per reported problem, the pointcut's name and the message.
		want []defErr
	}{
		{
			name:  "cycle of two",
			named: []Named{{"a", `within(x) || b`}, {"b", `exported() && a`}},
			want:  []defErr{{"b", 1, `1:15: pointcut cycle: a -> b -> a`}},
		},
		{
			name:  "self reference",
			named: []Named{{"a", `!a`}},
			want:  []defErr{{"a", 0, `1:2: pointcut cycle: a -> a`}},
		},
		{
			name:  "cycle not through the first",
			named: []Named{{"a", `b`}, {"b", `c`}, {"c", `within(x) && b`}},
			want:  []defErr{{"c", 2, `1:14: pointcut cycle: b -> c -> b`}},
		},
		{
			name:  "unknown name",
			named: []Named{{"a", `within(x)`}, {"b", `a && !c`}},
			want:  []defErr{{"b", 1, `1:7: unknown pointcut "c"; defined: a, b`}},
		},
		{
			name:  "duplicate",
			named: []Named{{"a", `within(x)`}, {"b", `within(y)`}, {"a", `within(z)`}},
			want:  []defErr{{"a", 2, `duplicate name: also defined at index 0`}},
		},
		{
			name:  "bad names",
			named: []Named{{"my-rule", `within(x)`}, {"", `within(x)`}, {"call", `within(x)`}, {"exported", `within(x)`}},
			want: []defErr{
				{"my-rule", 0, `name "my-rule" is not an identifier`},
				{"", 1, `empty name`},
				{"call", 2, `name "call" is reserved`},
				{"exported", 3, `name "exported" is reserved for the predicate exported()`},
			},
		},
		{
			name:  "parse error names the pointcut",
			named: []Named{{"ok", `within(x)`}, {"broken", `within(x) && executon(* x.F(..))`}},
			want:  []defErr{{"broken", 1, `1:14: unknown designator executon(`}},
		},
		{
			name: "every problem is reported",
			named: []Named{
				{"a", `within(x) &&`}, {"b", `a || c`}, {"d", `d`}, {"e", `execution(* x(..))`},
			},
			want: []defErr{
				{"a", 0, `1:13: unexpected end of expression`},
				{"d", 2, `1:1: pointcut cycle: d -> d`},
				{"e", 3, `1:13: expected a package pattern and "." before the function name`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := NewEnv(tt.named)
			require.Error(t, err)
			assert.Nil(t, env)
			var got []error
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				got = j.Unwrap()
			} else {
				got = []error{err}
			}
			require.Len(t, got, len(tt.want), "%v", err)
			for i, w := range tt.want {
				var de *DefinitionError
				require.True(t, errors.As(got[i], &de), "%T %v", got[i], got[i])
				assert.Equal(t, w.name, de.Name)
				assert.Equal(t, w.index, de.Index)
				assert.Contains(t, de.Err.Error(), w.msg)
				assert.Contains(t, de.Error(), `pointcut "`+w.name+`": `)
			}
		})
	}
}

type defErr struct {
	name  string
	index int
	msg   string
}

func TestCycleError(t *testing.T) {
	_, err := NewEnv([]Named{{"a", `b`}, {"b", `within(x) ||  a`}})
	var ce *CycleError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, []string{"a", "b", "a"}, ce.Cycle)
	var perr participle.Error
	require.True(t, errors.As(err, &perr), "the position in b's expression is available")
	assert.Equal(t, 15, perr.Position().Column)
	assert.EqualError(t, err, `pointcut "b": 1:15: pointcut cycle: a -> b -> a`)
}
