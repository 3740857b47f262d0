package toolstatetest_test

import (
	"fmt"

	"github.com/agentloop/agentloop/toolstate/toolstatetest"
)

// The suite saves states under these conversation ids; a store that keeps
// states only for known conversations (a toolstate.DocStore, only for chats
// that exist) must know them before Run.
func ExampleConversations() {
	fmt.Printf("%q\n", toolstatetest.Conversations)
	// Output:
	// ["c" "chat" "shared chat" "never-seen"]
}
