package mcptools

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// MaxNameLen is the longest tool name the package offers a model: the
// limit of the OpenAI and Anthropic APIs.
const MaxNameLen = 64

// validName reports whether s uses only the characters every provider
// accepts in a tool name (letters, digits, '_' and '-').
func validName(s string) bool {
	for _, r := range s {
		if !nameChar(r) {
			return false
		}
	}
	return true
}

func nameChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// toolName is the name the model calls an MCP tool by: prefix followed by
// the server's name for it, with every character providers reject (MCP
// allows '.' and '/', OpenAI does not) turned into '_'. A name longer than
// MaxNameLen keeps its head and ends with a hash of the whole, so that two
// long names stay apart.
func toolName(prefix, name string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, r := range name {
		if nameChar(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) <= MaxNameLen {
		return s
	}
	h := fnv.New32a()
	h.Write([]byte(prefix + name))
	suffix := fmt.Sprintf("_%08x", h.Sum32())
	return s[:MaxNameLen-len(suffix)] + suffix
}
