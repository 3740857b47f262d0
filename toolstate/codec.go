package toolstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Version is the version of the JSON written by [Marshal].
const Version = 1

// ErrCorrupt is wrapped by the error of decoding input that is not a valid
// tool-state document (bad JSON, a missing field, an impossible value).
var ErrCorrupt = errors.New("toolstate: corrupt tool state")

// ErrVersion is wrapped by the error of decoding a document whose version
// this build does not read.
var ErrVersion = errors.New("toolstate: unsupported tool state version")

// document is the serialized form of a State.
type document struct {
	Version   int                  `json:"version"`
	States    map[string]ToolState `json:"states"`
	Config    Config               `json:"config"`
	Timestamp time.Time            `json:"timestamp"`
}

// Marshal encodes s as JSON {"version", "states", "config", "timestamp"},
// where timestamp is s.Updated.
func Marshal(s *State) ([]byte, error) {
	states := s.Tools
	if states == nil {
		states = map[string]ToolState{}
	}
	return json.Marshal(document{Version: Version, States: states, Config: s.Config, Timestamp: s.Updated})
}

// Unmarshal decodes a document written by [Marshal]. Input that is not
// such a document is an error wrapping [ErrCorrupt] that says what is
// wrong; a version other than [Version] is an error wrapping [ErrVersion].
// The caller may then start from a fresh state ([LoadOrFresh] does).
func Unmarshal(data []byte) (*State, error) {
	var head struct {
		Version *json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %w", ErrCorrupt, err)
	}
	if head.Version == nil {
		return nil, fmt.Errorf("%w: no version field", ErrCorrupt)
	}
	var v int
	if err := json.Unmarshal(*head.Version, &v); err != nil {
		return nil, fmt.Errorf("%w: version %s is not an integer", ErrCorrupt, *head.Version)
	}
	if v != Version {
		return nil, fmt.Errorf("%w: version %d (this build reads version %d)", ErrVersion, v, Version)
	}
	var doc document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if doc.States == nil {
		return nil, fmt.Errorf("%w: no states object", ErrCorrupt)
	}
	if err := doc.Config.Validate(); err != nil {
		return nil, fmt.Errorf("%w: config: %w", ErrCorrupt, err)
	}
	for _, name := range slices.Sorted(maps.Keys(doc.States)) {
		ts := doc.States[name]
		switch {
		case name == "":
			return nil, fmt.Errorf("%w: a tool state has an empty name", ErrCorrupt)
		case !ts.Status.valid():
			return nil, fmt.Errorf("%w: tool %q has unknown status %q", ErrCorrupt, name, ts.Status)
		case ts.ConsecutiveFailures < 0 || ts.Successes < 0 || ts.Failures < 0:
			return nil, fmt.Errorf("%w: tool %q has a negative count", ErrCorrupt, name)
		}
	}
	return &State{Config: doc.Config, Tools: doc.States, Updated: doc.Timestamp}, nil
}
