package agentloop_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
)

type address struct {
	City string `json:"city" jsonschema:"description=City name"`
	Zip  string `json:"zip,omitempty"`
}

type shipArgs struct {
	OrderID string   `json:"order_id" jsonschema:"description=The order to ship"`
	Express bool     `json:"express,omitempty"`
	To      address  `json:"to"`
	Tags    []string `json:"tags,omitempty"`
}

// design.md §5.1: the generated schema has no $ref and an explicit required list.
func TestSchemaFor_HasNoRefAndExplicitRequired(t *testing.T) {
	raw, err := agentloop.SchemaFor[shipArgs]()
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "$ref")
	assert.NotContains(t, string(raw), "$schema")
	var s struct {
		Type       string                     `json:"type"`
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(raw, &s))
	assert.Equal(t, "object", s.Type)
	assert.ElementsMatch(t, []string{"order_id", "to"}, s.Required)
	assert.Contains(t, string(s.Properties["to"]), `"required":["city"]`, "nested structs are inlined with their own required list")
	assert.Contains(t, string(s.Properties["order_id"]), "The order to ship")
}

// design.md §5.1: arguments must be a struct, and a recursive one is refused (its
// schema would need $ref).
func TestSchemaFor_RejectsNonStructAndRecursiveTypes(t *testing.T) {
	_, err := agentloop.SchemaFor[string]()
	require.ErrorContains(t, err, "agentloop: arguments type string is not a struct")
	type node struct {
		Next *node `json:"next,omitempty"`
	}
	_, err = agentloop.SchemaFor[node]()
	require.ErrorContains(t, err, "recursive")
}

// design.md §5.1: a typed tool's output is sent as JSON, except a string, which is sent
// as it is.
func TestNewTool_OutputIsJSONExceptStrings(t *testing.T) {
	obj, err := agentloop.NewTool("obj", "", func(ctx context.Context, a shipArgs) (map[string]any, error) {
		return map[string]any{"shipped": a.OrderID, "city": a.To.City}, nil
	})
	require.NoError(t, err)
	out, err := obj.Func(t.Context(), json.RawMessage(`{"order_id":"o1","to":{"city":"Oslo"}}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"shipped":"o1","city":"Oslo"}`, out)

	str, err := agentloop.NewTool("str", "", func(ctx context.Context, a shipArgs) (string, error) { return "plain " + a.OrderID, nil })
	require.NoError(t, err)
	out, err = str.Func(t.Context(), json.RawMessage(`{"order_id":"o2","to":{"city":"Oslo"}}`))
	require.NoError(t, err)
	assert.Equal(t, "plain o2", out)
}

// design.md §5.1: a raw tool needs a name, a func (else it is a client tool)
// and a schema that is a JSON object and compiles.
func TestNewRawTool_RejectsBadSchemas(t *testing.T) {
	fn := func(context.Context, json.RawMessage) (string, error) { return "", nil }
	_, err := agentloop.NewRawTool("t", "", json.RawMessage(`{"type":`), fn)
	require.ErrorContains(t, err, "not valid JSON")
	_, err = agentloop.NewRawTool("t", "", json.RawMessage(`[1]`), fn)
	require.ErrorContains(t, err, "not a JSON object")
	_, err = agentloop.NewRawTool("t", "", json.RawMessage(`{"type":"object","properties":{"a":{"type":"nonsense"}}}`), fn)
	require.ErrorContains(t, err, "invalid schema")
	_, err = agentloop.NewRawTool("", "", nil, fn)
	require.ErrorContains(t, err, "empty name")
	_, err = agentloop.NewRawTool("t", "", nil, nil)
	require.ErrorContains(t, err, "NewClientTool")
}

// design.md §5.1: a client tool has no Func and, without a schema, takes an empty object.
func TestNewClientTool_IsClientAndHasDefaultSchema(t *testing.T) {
	c, err := agentloop.NewClientTool("pick", "Pick a color.", nil)
	require.NoError(t, err)
	assert.True(t, c.RunsOnClient())
	assert.JSONEq(t, `{"type":"object","properties":{}}`, string(c.Def().Schema))
}
