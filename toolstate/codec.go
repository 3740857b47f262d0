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

// ErrInvalidState is wrapped by the error of encoding or storing a state that
// breaks the rules [Unmarshal] checks (an invalid [Config], an unknown
// status, an empty tool name, a negative count), so that no store writes a
// state it could not read back.
var ErrInvalidState = errors.New("toolstate: invalid tool state")

// Marshal encodes s as JSON {"version", "states", "config", "timestamp"},
// where timestamp is s.Updated. A nil or invalid s is an error wrapping
// [ErrInvalidState] that names the problem.
func Marshal(s *State) ([]byte, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil state", ErrInvalidState)
	}
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidState, err)
	}
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
	s := &State{Config: doc.Config, Tools: doc.States, Updated: doc.Timestamp}
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return s, nil
}

// undecodable reports whether err says that a stored state could not be
// decoded (corrupt, or of an unknown version): the caller may set it aside
// and start fresh.
func undecodable(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, ErrVersion)
}

// validate reports the first thing in s that [Unmarshal] would refuse.
func (s *State) validate() error {
	if err := s.Config.Validate(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	for name, ts := range s.Tools {
		if checkTool(name, ts) != nil {
			return firstBadTool(s.Tools)
		}
	}
	return nil
}

// firstBadTool returns the error of the first bad tool state in name
// order, so that the same state always gets the same error. Sorting costs
// allocations, so validate calls it only once it has found a bad one.
func firstBadTool(tools map[string]ToolState) error {
	for _, name := range slices.Sorted(maps.Keys(tools)) {
		if err := checkTool(name, tools[name]); err != nil {
			return err
		}
	}
	return nil
}

func checkTool(name string, ts ToolState) error {
	switch {
	case name == "":
		return errors.New("a tool state has an empty name")
	case !ts.Status.valid():
		return fmt.Errorf("tool %q has unknown status %q", name, ts.Status)
	case ts.ConsecutiveFailures < 0 || ts.Successes < 0 || ts.Failures < 0:
		return fmt.Errorf("tool %q has a negative count", name)
	}
	return nil
}
