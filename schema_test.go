package agentloop

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The validator's errors name the place and the rule, without the
// library's "validating root" preamble, and tell bad JSON apart.
func TestValidator_ErrorsNameThePlaceAndTheRule(t *testing.T) {
	type inner struct {
		X int `json:"x"`
	}
	type args struct {
		A int    `json:"a"`
		E string `json:"e,omitempty" jsonschema:"enum=red,enum=green"`
		I inner  `json:"i,omitzero"`
	}
	schema, err := SchemaFor[args]()
	require.NoError(t, err)
	v, err := compileSchema(schema)
	require.NoError(t, err)

	require.NoError(t, v.validate([]byte(`{"a": 3, "e": "red", "i": {"x": 1}}`)))
	for data, want := range map[string]string{
		`{"a": "3"}`:                `/properties/a: type: 3 has type "string", want "integer"`,
		`{"a": 1.5}`:                `/properties/a: type: 1.5 has type "number", want "integer"`,
		`{"e": "red"}`:              `required: missing properties: ["a"]`,
		`{"a": 1, "z": 2}`:          `unexpected additional properties ["z"]`,
		`{"a": 1, "e": "blue"}`:     `/properties/e: enum: blue does not equal any of: [red green]`,
		`{"a": 1, "i": {"x": "q"}}`: `/properties/i/properties/x: type: q has type "string", want "integer"`,
	} {
		err := v.validate([]byte(data))
		var notJSON *notJSONError
		require.Error(t, err, data)
		assert.False(t, errors.As(err, &notJSON), data)
		assert.Equal(t, want, err.Error(), data)
	}
	for _, data := range []string{`{"a": 1,`, `{"a": 1} x`, ``} {
		var notJSON *notJSONError
		assert.True(t, errors.As(v.validate([]byte(data)), &notJSON), "%q is not JSON", data)
	}
}

// A schema the validator cannot check faithfully is refused when the tool is
// made, not when the model calls it; data that looks like a schema is not.
func TestCompileSchema_RefusesWhatItCannotCheck(t *testing.T) {
	for schema, want := range map[string]string{
		`{"$schema": "http://json-schema.org/draft-04/schema#"}`: `$schema "http://json-schema.org/draft-04/schema#" is not a draft`,
		`{"properties": {"a": {"type": ["string", "text"]}}}`:    `type text is not a JSON Schema type`,
		`{"properties": {"a": {"items": {"type": "nonsense"}}}}`: `type nonsense is not a JSON Schema type`,
		`{"properties": 3}`: `invalid schema`,
		`{"properties": {"a": {"$ref": "#/$defs/missing"}}}`:               `invalid schema`,
		`{"type": "object", "properties": {"a": {"type": "string"}}, "x":`: `not valid JSON`,
	} {
		_, err := compileSchema(json.RawMessage(schema))
		assert.ErrorContains(t, err, want, schema)
	}
	for _, schema := range []string{
		`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}`,
		`{"type": "object", "properties": {"type": {"type": "string"}}}`,
		`{"type": "object", "properties": {"type": true}}`,
		`{"type": "object", "default": {"type": "car"}, "enum": [{"type": "bus"}]}`,
	} {
		_, err := compileSchema(json.RawMessage(schema))
		assert.NoError(t, err, schema)
	}
}
