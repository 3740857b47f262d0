package providertest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// TextOf is the text of a decoded JSON message content: a string as it is,
// or the "text" fields of a list of parts joined (parts without one, such
// as images, add nothing); anything else is "".
func TextOf(content any) string {
	switch v := content.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, x := range v {
			if m, ok := x.(map[string]any); ok {
				if t, ok := m["text"].(string); ok {
					b.WriteString(t)
				}
			}
		}
		return b.String()
	}
	return ""
}

// CanonicalJSON re-encodes a string that holds JSON (such as a call's
// arguments) compactly, with object keys sorted, so that two encodings of
// the same value compare equal; anything else is fmt.Sprint of it.
func CanonicalJSON(s any) string {
	var v any
	if str, ok := s.(string); ok && json.Unmarshal([]byte(str), &v) == nil {
		b, _ := json.Marshal(v)
		return string(b)
	}
	return fmt.Sprint(s)
}
