package agentloop

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// This file is the package's one schema path: schemas are generated from Go
// types by github.com/invopop/jsonschema ([SchemaFor]) and every instance is
// validated by github.com/google/jsonschema-go, the MCP Go SDK's validator
// (drafts 2020-12 and 07; one without "$schema" is read as 2020-12).

// validator checks JSON values against one compiled schema. It is safe for
// concurrent use.
type validator struct {
	resolved *jsonschema.Resolved
}

// compileSchema compiles a JSON Schema. It refuses a schema that is not
// JSON, not a schema, or of a draft the validator does not know.
func compileSchema(schema json.RawMessage) (*validator, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) || !json.Valid(schema) {
			return nil, fmt.Errorf("schema is not valid JSON: %w", err)
		}
		return nil, fmt.Errorf("invalid schema: %w", err)
	}
	switch s.Schema {
	case "", "https://json-schema.org/draft/2020-12/schema",
		"http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#":
	default:
		return nil, fmt.Errorf("invalid schema: $schema %q is not a draft this package validates (2020-12 or 07)", s.Schema)
	}
	var doc any
	if err := json.Unmarshal(schema, &doc); err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	if err := checkTypeNames(doc); err != nil {
		return nil, fmt.Errorf("invalid schema: %w", err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("invalid schema: %w", err)
	}
	return &validator{resolved: r}, nil
}

// checkTypeNames refuses a "type" that names no JSON Schema type, which the
// validator would take and then refuse every value for. It walks the decoded
// schema, skipping the keywords whose values are data, not schemas.
func checkTypeNames(doc any) error {
	switch d := doc.(type) {
	case []any:
		for _, v := range d {
			if err := checkTypeNames(v); err != nil {
				return err
			}
		}
	case map[string]any:
		for key, v := range d {
			switch key {
			case "enum", "const", "default", "examples":
				continue
			case "type":
				names, isList := v.([]any)
				if name, ok := v.(string); ok {
					names = []any{name}
				} else if !isList {
					break // a property named "type": a schema, walked below
				}
				for _, n := range names {
					switch n {
					case "null", "boolean", "object", "array", "number", "string", "integer":
					default:
						return fmt.Errorf("type %v is not a JSON Schema type", n)
					}
				}
				continue
			}
			if err := checkTypeNames(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// validate decodes data, one JSON value, and checks it against the schema.
// The error says which: a *notJSONError wraps a decoding error; any other error
// is a schema violation whose text names the place and the rule.
func (v *validator) validate(data []byte) error {
	var inst any
	if err := json.Unmarshal(data, &inst); err != nil {
		return &notJSONError{err}
	}
	if err := v.resolved.Validate(inst); err != nil {
		// The validator's texts start with "validating root: " (the schema
		// has no id to name) and repeat "validating /path: " on the way
		// down; the last one names the place.
		msg := err.Error()
		if i := strings.LastIndex(msg, "validating "); i >= 0 {
			msg = msg[i+len("validating "):]
		}
		if rest, ok := strings.CutPrefix(msg, "root: "); ok {
			msg = rest
		}
		return errors.New(msg)
	}
	return nil
}

// notJSONError is the error of validate when the data is not JSON.
type notJSONError struct{ err error }

func (e *notJSONError) Error() string { return e.err.Error() }
func (e *notJSONError) Unwrap() error { return e.err }
