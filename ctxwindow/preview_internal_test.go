package ctxwindow

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentloop/agentloop"
)

func TestPreview_CutsOnCharacterBoundaries(t *testing.T) {
	s := strings.Repeat("日本語のテキスト", 500) // 3 bytes a character
	for keep := 0; keep < 40; keep++ {
		p, ok := preview(s, 300+keep, "c1", true)
		if !ok || !utf8.ValidString(p) {
			t.Fatalf("keep %d: preview is not valid UTF-8 (ok %v)", 300+keep, ok)
		}
	}
	for off := 0; off < 10; off++ {
		page, err := readPage(s, 1000+off, 100+off)
		if err != nil || !utf8.ValidString(page) {
			t.Fatalf("offset %d: page %q, %v", 1000+off, page, err)
		}
	}
}

func TestPreview_LeavesShortContentAlone(t *testing.T) {
	s := strings.Repeat("x", 1000+minSaving)
	if p, ok := preview(s, 1000, "c1", true); ok || p != s {
		t.Fatal("content that a preview would barely shorten was shortened")
	}
}

func TestDigest_ChangesWithAnyContentButNotMessageIDs(t *testing.T) {
	base := func() agentloop.History {
		return agentloop.History{
			{ID: "m1", Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("ab"), agentloop.TextPart("c"),
				{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/png", Data: []byte("png")}}}},
			{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{
				{Type: agentloop.PartReasoning, Text: "r", Signature: "s"},
				{Type: agentloop.PartToolCall, ToolCall: &agentloop.ToolCall{ID: "c1", Name: "n", Args: []byte(`{}`)}},
				{Type: agentloop.PartApprovalRequest, Approval: &agentloop.Approval{CallID: "c1", ID: "a1"}}}},
			{Role: agentloop.RoleTool, Parts: []agentloop.Part{
				{Type: agentloop.PartApprovalResponse, Approval: &agentloop.Approval{CallID: "c1", ID: "a1", Approved: true}},
				{Type: agentloop.PartToolResult, ToolResult: &agentloop.ToolResult{CallID: "c1", Name: "n", Content: "out"}}}},
		}
	}
	want := digest(base())
	same := base()
	same[0].ID = "other id"
	if digest(same) != want {
		t.Fatal("a message id changed the digest")
	}
	for name, change := range map[string]func(h agentloop.History){
		"text split differently": func(h agentloop.History) { h[0].Parts[0].Text, h[0].Parts[1].Text = "a", "bc" },
		"file data":              func(h agentloop.History) { h[0].Parts[2].File.Data = []byte("gif") },
		"role":                   func(h agentloop.History) { h[0].Role = agentloop.RoleSystem },
		"signature":              func(h agentloop.History) { h[1].Parts[0].Signature = "t" },
		"arguments":              func(h agentloop.History) { h[1].Parts[1].ToolCall.Args = []byte(`{"a":1}`) },
		"approval":               func(h agentloop.History) { h[2].Parts[0].Approval.Approved = false },
		"result":                 func(h agentloop.History) { h[2].Parts[1].ToolResult.IsError = true },
		"a message less":         func(h agentloop.History) {},
	} {
		h := base()
		change(h)
		if name == "a message less" {
			h = h[:2]
		}
		if digest(h) == want {
			t.Errorf("%s: the digest did not change", name)
		}
	}
	long := base()
	long[2].Parts[1].ToolResult.Content = strings.Repeat("x", 3*digestBuf+7)
	long2 := base()
	long2[2].Parts[1].ToolResult.Content = strings.Repeat("x", 3*digestBuf+6) + "y"
	long3 := base()
	long3[2].Parts[1].ToolResult.Content = strings.Repeat("x", 3*digestBuf+8)
	if d := digest(long); d == digest(long2) || d == digest(long3) {
		t.Error("a long field's end or length changed, but not the digest")
	}
}
