package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"
)

// ResponseFormat asks the model for a final answer that is a JSON value
// matching Schema. It is set in [Settings]; the providers send it their
// API's way:
//
//   - Ollama: the request's "format" is the schema. The server constrains
//     every token of a reply to it with a grammar, so a model cannot call
//     tools while a ResponseFormat is set.
//   - OpenAI Chat Completions: response_format {"type": "json_schema"}.
//   - OpenAI Responses: text.format {"type": "json_schema"}.
//   - Anthropic: its native structured output, output_config.format
//     {"type": "json_schema"}; tool calls stay free.
//
// Servers that only imitate an API may ignore the field (Ollama's
// Anthropic-compatible endpoint does). [Structured] validates the answer
// whatever the server did.
//
// A ResponseFormat is read, never modified, by the loop and the providers.
type ResponseFormat struct {
	// Name names the schema, for APIs that want one (OpenAI: letters,
	// digits, '_' and '-', at most 64); "" means "response".
	Name string `json:"name,omitempty"`
	// Description tells the model what the answer is; "" means none.
	Description string `json:"description,omitempty"`
	// Schema is the JSON Schema of the answer. Required. APIs that
	// enforce schemas want an object schema whose objects all set
	// "additionalProperties": false, as [SchemaFor] makes them.
	Schema json.RawMessage `json:"schema"`
	// Strict asks APIs that have a strict mode (OpenAI) to enforce the
	// schema exactly; they then also want every property listed as
	// required. Anthropic's structured output is always strict, Ollama's
	// grammar always applies.
	Strict bool `json:"strict,omitempty"`
}

// FormatName returns f.Name, or "response" when it is empty.
func (f *ResponseFormat) FormatName() string {
	if f.Name == "" {
		return "response"
	}
	return f.Name
}

// ResponseFormatFor returns a ResponseFormat for answers of type T, which
// must be a struct (or a pointer to one), with the schema [SchemaFor]
// generates and a name taken from the type's name.
func ResponseFormatFor[T any]() (*ResponseFormat, error) {
	schema, err := schemaFor[T]()
	if err != nil {
		return nil, fmt.Errorf("agentloop: response format: %w", err)
	}
	return &ResponseFormat{Name: formatName(reflect.TypeFor[T]()), Schema: schema}, nil
}

// formatName makes a type's name fit OpenAI's rules for schema names.
func formatName(typ reflect.Type) string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	name := strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-') {
			return r
		}
		return '_'
	}, typ.Name())
	if name == "" {
		return "response"
	}
	return name[:min(len(name), 64)]
}

// OutputError is the error of a [Structured] run whose final answer did not
// fit the schema even after the model was told what failed and answered
// again.
type OutputError struct {
	// Text is the model's last answer.
	Text string
	// Err says what failed: the answer is not JSON, breaks the schema, or
	// does not decode into the Go type.
	Err error
	// History is the whole run's transcript, both answers included.
	History History
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("agentloop: the final answer does not fit the response format, also after one retry: %v", e.Err)
}

// Unwrap returns Err.
func (e *OutputError) Unwrap() error { return e.Err }

// Structured runs agent on history, asking for a final answer that is JSON
// matching the schema of T (a struct, see [ResponseFormatFor]), and returns
// the answer decoded into a T together with the run's [Final].
//
// The answer is validated against the schema before it is decoded. When it
// is not JSON, breaks the schema or does not decode, the model is told what
// failed in a user message appended to the history, and gets one more run;
// a second failure is an [*OutputError]. The returned Final is the last
// run's, with Usage and Turns summed over both runs.
//
// The ResponseFormat is set on the run's settings (those of agent, or
// opts.Settings); one already set is replaced. opts is not modified. A run that ends in
// [Pending] (client tools or approvals) returns [ErrPending]; a failed run
// returns its error. Structured is safe for concurrent use as
// [Agent.Stream] is.
func Structured[T any](ctx context.Context, agent *Agent, history History, opts *RunOptions) (T, Final, error) {
	var zero T
	format, err := ResponseFormatFor[T]()
	if err != nil {
		return zero, Final{}, err
	}
	validator, err := compileSchema(format.Schema)
	if err != nil {
		return zero, Final{}, fmt.Errorf("agentloop: response format of %v: %w", reflect.TypeFor[T](), err)
	}
	var o RunOptions
	if opts != nil {
		o = *opts
	}
	settings := agent.Settings
	if o.Settings != nil {
		settings = *o.Settings
	}
	settings.ResponseFormat = format
	o.Settings = &settings

	var total Final
	for attempt := 1; ; attempt++ {
		last, err := Drain(agent.Stream(ctx, history, &o))
		if err != nil {
			return zero, Final{}, err
		}
		final, ok := last.(Final)
		if !ok {
			return zero, Final{}, ErrPending
		}
		total.Usage = total.Usage.Add(final.Usage)
		total.Turns += final.Turns
		v, err := decodeAnswer[T](final.Text, validator)
		if err == nil {
			final.Usage, final.Turns = total.Usage, total.Turns
			return v, final, nil
		}
		if attempt == 2 {
			return zero, Final{}, &OutputError{Text: final.Text, Err: err, History: final.History}
		}
		history = append(final.History.Clone(), UserMessage(fmt.Sprintf(
			"Your answer cannot be used: %v. Answer again with only a JSON value that matches the required schema.", err)))
	}
}

// decodeAnswer validates text against the schema and decodes it into a T.
// A Markdown code fence around the JSON is allowed (models add them); the
// errors are written for the model to act on.
func decodeAnswer[T any](text string, validator *validator) (T, error) {
	var v T
	raw := strings.TrimSpace(text)
	if body, ok := strings.CutPrefix(raw, "```"); ok {
		if i := strings.IndexByte(body, '\n'); i >= 0 {
			body = body[i+1:] // the fence's language tag
		}
		if inner, ok := strings.CutSuffix(strings.TrimSpace(body), "```"); ok {
			raw = strings.TrimSpace(inner)
		}
	}
	if raw == "" {
		return v, errors.New("the answer is empty; it must be a JSON value")
	}
	var notJSON *notJSONError
	if err := validator.validate([]byte(raw)); errors.As(err, &notJSON) {
		return v, fmt.Errorf("the answer is not valid JSON (%v)", err)
	} else if err != nil {
		return v, fmt.Errorf("the answer breaks the schema: %v", err)
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return v, fmt.Errorf("the answer does not fit the expected type: %v", err)
	}
	return v, nil
}
