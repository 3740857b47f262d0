package aisdk_test

import (
	"fmt"
	"net/http/httptest"

	"github.com/agentloop/agentloop/aisdk"
)

// A server that others reach by name answers for its names only: a page
// of another name that resolves to the server's address (DNS rebinding)
// is refused.
func ExampleAllowHosts() {
	allow := aisdk.AllowHosts("chat.example.com", ".corp.example")
	for _, host := range []string{"chat.example.com:443", "team.corp.example", "rebound.attacker.example"} {
		r := httptest.NewRequest("GET", "/api/chats", nil)
		r.Host = host
		fmt.Printf("%s: %v\n", host, allow(r, ""))
	}
	// Output:
	// chat.example.com:443: <nil>
	// team.corp.example: <nil>
	// rebound.attacker.example: host "rebound.attacker.example" is not one this server answers for
}
