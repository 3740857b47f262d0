package aisdk_test

import (
	"encoding/base64"
	"log"
	"net/http"
	"os"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/simtest"
)

// The shortest server, as the package doc shows it: stateless, with the
// signing key from the environment. (Compiled, not run: it serves until
// killed; the sqlitestore module has the stored one.)
func ExampleHandler_stateless() {
	agent := &agentloop.Agent{Model: simtest.NewModel()} // a provider's model in a real server

	secret, err := base64.StdEncoding.DecodeString(os.Getenv("CHAT_SECRET")) // openssl rand -base64 32
	if err != nil || len(secret) < aisdk.MinSecretSize {
		log.Fatal("CHAT_SECRET must be 32 random bytes, base64-encoded")
	}
	chat := &aisdk.Handler{Agent: agent, Secret: secret}
	http.Handle("POST /api/chat", chat)
	log.Fatal(http.ListenAndServe("localhost:8080", nil))
}
