package agentloop

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fuzzSchemas are schemas the fast path compiles: what SchemaFor makes of
// a struct with every kind of field, a hand-written one, and the empty one.
func fuzzSchemas(t testing.TB) []json.RawMessage {
	type inner struct {
		X int    `json:"x"`
		Y string `json:"y,omitempty"`
	}
	type args struct {
		A  int            `json:"a" jsonschema:"description=First"`
		B  float64        `json:"b,omitempty"`
		S  string         `json:"s"`
		L  []string       `json:"l,omitempty"`
		I  inner          `json:"i"`
		M  map[string]int `json:"m,omitempty"`
		E  string         `json:"e,omitempty" jsonschema:"enum=red,enum=green"`
		Bo bool           `json:"bo,omitempty"`
		N  []inner        `json:"n,omitempty"`
	}
	generated, err := SchemaFor[args]()
	if err != nil {
		t.Fatal(err)
	}
	return []json.RawMessage{
		generated,
		json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"number"},"any":true},"required":["q"]}`),
		emptyObjectSchema,
	}
}

// What the fast path accepts, the full validator accepts: it may only
// vouch for arguments the schema allows (a refusal just falls back).
func FuzzFastSchema_AcceptsOnlyWhatTheValidatorAccepts(f *testing.F) {
	for _, seed := range []string{
		`{"a":1,"s":"x","i":{"x":2}}`, `{"a":1.0,"s":"x","i":{"x":2}}`, `{"a":1,"s":"x","i":{"x":2},"e":"red"}`,
		`{"a":1,"s":"x","i":{"x":2},"e":"blue"}`, `{"a":1,"s":"x","i":{"x":2,"z":1}}`, `{"a":1,"s":"\u00e9\n","i":{"x":-0}}`,
		`{"a":1,"s":"x","i":{"x":2},"m":{"k":3},"l":["a"],"n":[{"x":1}],"bo":true,"b":1e3}`, `{"q":"x","any":[null,{}]}`,
		`{}`, `[]`, `{"a":1e2,"s":"","i":{"x":0}}`, `{"a":01}`, "{\"s\":\"\xff\"}", `{"a":1,"a":"x","s":"x","i":{"x":2}}`,
	} {
		f.Add([]byte(seed))
	}
	schemas := fuzzSchemas(f)
	type pair struct {
		fast *shape
		full *jsonschema.Schema
	}
	var pairs []pair
	for _, s := range schemas {
		fast, ok := compileShape(s)
		if !ok {
			f.Fatalf("the fast path does not compile %s", s)
		}
		full, err := compileSchema(s)
		if err != nil {
			f.Fatal(err)
		}
		pairs = append(pairs, pair{fast, full})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for i, p := range pairs {
			if !p.fast.accepts(data) {
				continue
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("schema %d: the fast path accepted %q, which is not JSON: %v", i, data, err)
			}
			if err := p.full.Validate(inst); err != nil {
				t.Fatalf("schema %d: the fast path accepted %q, which the validator refuses: %v", i, data, err)
			}
		}
	})
}

// The fast path takes the plain subset and leaves everything else to the
// validator.
func TestCompileShape_TakesOnlyThePlainSubset(t *testing.T) {
	for _, s := range fuzzSchemas(t) {
		_, ok := compileShape(s)
		if !ok {
			t.Errorf("not compiled: %s", s)
		}
	}
	for _, s := range []string{
		`{"type":"object","properties":{"n":{"type":"integer","minimum":1}}}`,
		`{"type":"object","properties":{"n":{"type":["string","null"]}}}`,
		`{"type":"object","properties":{"n":{"$ref":"#/$defs/x"}}}`,
		`{"type":"object","properties":{"n":{"anyOf":[{"type":"string"}]}}}`,
		`{"type":"object","properties":{"n":{"type":"string","pattern":"^a"}}}`,
		`{"type":"object","properties":{"n":{"enum":[1,2]}}}`,
		`{"type":"object","required":["undeclared"]}`,
	} {
		if _, ok := compileShape(json.RawMessage(s)); ok {
			t.Errorf("compiled, but the fast path cannot check it: %s", s)
		}
	}
}

// Valid arguments are accepted by the fast path (the point of it), and
// checkArgs still names the problem of invalid ones.
func TestCheckArgs_FastPathAcceptsValidAndValidatorExplainsInvalid(t *testing.T) {
	type args struct {
		A int    `json:"a"`
		S string `json:"s,omitempty"`
	}
	tool, err := NewTool("t", "", func(_ context.Context, a args) (string, error) { return "", nil })
	if err != nil {
		t.Fatal(err)
	}
	if tool.fast == nil || !tool.fast.accepts([]byte(`{"a": 3, "s": "x"}`)) {
		t.Fatal("the fast path does not take a typed tool's valid arguments")
	}
	for args, want := range map[string]string{
		`{"a": "3"}`:       "at '/a': got string, want integer",
		`{"s": "x"}`:       "missing property 'a'",
		`{"a": 1, "z": 2}`: "additional properties 'z' not allowed",
		`{"a": 1,`:         "not valid JSON",
	} {
		_, err := tool.checkArgs(json.RawMessage(args))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("checkArgs(%s) = %v, want an error containing %q", args, err, want)
		}
	}
}
