package agentloop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	invopop "github.com/invopop/jsonschema"
)

// ToolFunc runs a tool: it gets the call's arguments (a JSON object that
// passed the tool's schema) and returns the content the model sees. A
// returned error becomes an error result that the model sees. It must return
// promptly once ctx is done.
type ToolFunc func(ctx context.Context, args json.RawMessage) (string, error)

// Tool is a tool the model may call. Build one with [NewTool], [NewRawTool]
// or [NewClientTool]; they check the schema and prepare argument validation.
//
// A Tool must not be modified once a run that uses it has started; a Tool may
// be shared by any number of concurrent runs.
//
// A tool's func runs once per call in process. Under a durable engine
// ([Effects], such as the dbosrun module) a call is at least once: a call
// whose result was recorded never runs again, but a call that was running
// when its process died runs again when the run is recovered. A tool with
// side effects (a payment, an email) should make a repeat harmless: pass
// [IdempotencyKey] of its ctx, the same on every attempt of the call, to
// the API it calls, or keep it with what it writes.
type Tool struct {
	// Name is what the model calls the tool by.
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// Schema is the JSON Schema of the arguments object.
	Schema json.RawMessage
	// Func runs the tool on the server. A nil Func makes a client tool: one
	// that runs in the caller's front end (the run pauses with a [Pending]
	// item when the model calls it).
	Func ToolFunc
	// NeedsApproval makes every call of the tool wait for an approval
	// decision (the run pauses with a [Pending] item) before it runs.
	NeedsApproval bool
	// Timeout bounds one call; 0 means [Agent.ToolTimeout]. A call that runs
	// out of time gets an error result.
	Timeout time.Duration

	validator *validator
	nests     bool // an AgentTool: its calls hand Nested items to the run
}

// Def returns what the model is told about the tool.
func (t *Tool) Def() ToolDef {
	return ToolDef{Name: t.Name, Description: t.Description, Schema: t.Schema}
}

// RunsOnClient reports whether the tool is a client tool ([NewClientTool]):
// it has no Func and runs in the caller's front end.
func (t *Tool) RunsOnClient() bool { return t.Func == nil }

// NewTool returns a tool that runs fn. The JSON Schema of Args (a struct) is
// generated with github.com/invopop/jsonschema in the form LLM providers
// accept: no $ref, a "required" list naming every field without omitempty,
// no additional properties. Use `jsonschema:"description=…"` tags to
// describe fields. The arguments of every call are validated against the
// schema before fn runs; a failure becomes an error result naming the field.
// fn's output is sent to the model as JSON, except a string, which is sent as is.
func NewTool[Args, Out any](name, description string, fn func(context.Context, Args) (Out, error)) (*Tool, error) {
	if fn == nil {
		return nil, fmt.Errorf("agentloop: tool %q: nil func", name)
	}
	schema, err := schemaFor[Args]()
	if err != nil {
		return nil, fmt.Errorf("agentloop: tool %q: %w", name, err)
	}
	call := func(ctx context.Context, raw json.RawMessage) (string, error) {
		var args Args
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", fmt.Errorf("arguments do not fit the tool's schema: %w", err)
		}
		out, err := fn(ctx, args)
		if err != nil {
			return "", err
		}
		if s, ok := any(out).(string); ok {
			return s, nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return "", fmt.Errorf("tool output is not JSON: %w", err)
		}
		return string(b), nil
	}
	return NewRawTool(name, description, schema, call)
}

// NewRawTool returns a tool with a hand-written JSON Schema (an object
// schema; nil means one that accepts any object). The schema must compile:
// draft 2020-12, or draft-07 when its "$schema" says so; other drafts and
// unknown type names are refused. Arguments are validated against it (by
// github.com/google/jsonschema-go) before fn runs.
func NewRawTool(name, description string, schema json.RawMessage, fn ToolFunc) (*Tool, error) {
	if fn == nil {
		return nil, fmt.Errorf("agentloop: tool %q: nil func (use NewClientTool for a client tool)", name)
	}
	t := &Tool{Name: name, Description: description, Schema: schema, Func: fn}
	if err := t.prepare(); err != nil {
		return nil, err
	}
	return t, nil
}

// NewClientTool returns a tool that runs in the caller's front end: the model
// is offered it, its arguments are validated, and the run pauses for its
// result. schema nil means one that accepts any object.
func NewClientTool(name, description string, schema json.RawMessage) (*Tool, error) {
	t := &Tool{Name: name, Description: description, Schema: schema}
	if err := t.prepare(); err != nil {
		return nil, err
	}
	return t, nil
}

var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// prepare checks the name and compiles the schema.
func (t *Tool) prepare() error {
	if t.Name == "" {
		return errors.New("agentloop: tool with an empty name")
	}
	if len(bytes.TrimSpace(t.Schema)) == 0 {
		t.Schema = emptyObjectSchema
	}
	v, err := compileArgsSchema(t.Schema)
	if err != nil {
		return fmt.Errorf("agentloop: tool %q: %w", t.Name, err)
	}
	t.validator = v
	return nil
}

// compileArgsSchema compiles the schema of a tool's arguments, which must
// describe an object.
func compileArgsSchema(schema json.RawMessage) (*validator, error) {
	var doc any
	if err := json.Unmarshal(schema, &doc); err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	if m, ok := doc.(map[string]any); !ok {
		return nil, errors.New("schema is not a JSON object")
	} else if typ, ok := m["type"]; ok && typ != "object" {
		return nil, fmt.Errorf("schema type is %v; tool arguments must be an object", typ)
	}
	return compileSchema(schema)
}

// SchemaFor returns the JSON Schema that [NewTool] generates for Args, which
// must be a struct (or a pointer to one).
func SchemaFor[Args any]() (json.RawMessage, error) {
	schema, err := schemaFor[Args]()
	if err != nil {
		return nil, fmt.Errorf("agentloop: %w", err)
	}
	return schema, nil
}

// schemaFor is [SchemaFor] with errors that carry no prefix, for callers
// that add their own.
func schemaFor[Args any]() (json.RawMessage, error) {
	typ := reflect.TypeFor[Args]()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct {
		return nil, fmt.Errorf("arguments type %v is not a struct; tool arguments are a JSON object", typ)
	}
	if recursive(typ, nil) {
		return nil, fmt.Errorf("arguments type %v is recursive; its schema would need $ref, which providers reject", typ)
	}
	r := &invopop.Reflector{DoNotReference: true, ExpandedStruct: true}
	s := r.ReflectFromType(typ)
	s.Version = ""
	s.ID = ""
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("generating schema: %w", err)
	}
	return b, nil
}

// recursive reports whether typ refers to itself through its fields, which
// would make an inlined schema infinite.
func recursive(typ reflect.Type, seen []reflect.Type) bool {
	switch typ.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return recursive(typ.Elem(), seen)
	case reflect.Struct:
		if slices.Contains(seen, typ) {
			return true
		}
		seen = append(seen, typ)
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.IsExported() && f.Tag.Get("json") != "-" && recursive(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

// checkArgs validates a call's arguments and returns them normalised (empty
// arguments become {}). The error is written for the model to act on and
// matches [ErrInvalidArgs].
func (t *Tool) checkArgs(args json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	if t.validator == nil {
		if !json.Valid(args) {
			return nil, &toolError{kind: ErrInvalidArgs, msg: fmt.Sprintf("the arguments are not valid JSON; call %s again with a JSON object", t.Name)}
		}
		return args, nil
	}
	err := t.validator.validate(args)
	var notJSON *notJSONError
	switch {
	case err == nil:
		return args, nil
	case errors.As(err, &notJSON):
		return nil, &toolError{kind: ErrInvalidArgs, msg: fmt.Sprintf("the arguments are not valid JSON (%v); call %s again with a JSON object", err, t.Name)}
	default:
		return nil, &toolError{kind: ErrInvalidArgs, msg: fmt.Sprintf("the arguments do not match the tool's schema: %v; call %s again with corrected arguments", err, t.Name)}
	}
}
