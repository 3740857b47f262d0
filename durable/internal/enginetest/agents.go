package enginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"sync"

	"github.com/agentloop/agentloop"
)

// counter counts the model and tool calls of a case's agents, in every
// process (runner) the case opens.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[what]++
}

func (c *counter) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// script is a model that counts its calls as name and yields the chunks
// reply returns for the request.
func script(c *counter, name string, reply func(n int, req *agentloop.Request) []agentloop.Chunk) agentloop.Model {
	return agentloop.ModelFunc(func(_ context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			n := Replies(req)
			c.add(fmt.Sprintf("%s %d", name, n))
			for _, ch := range reply(n, req) {
				if !yield(ch, nil) {
					return
				}
			}
		}
	})
}

// countedTool is a tool that counts its calls and answers with its name
// and the call's idempotency key.
func countedTool(c *counter, name string) *agentloop.Tool {
	t, err := agentloop.NewRawTool(name, "Counts.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
		c.add("tool " + name)
		return name + " done, key " + agentloop.IdempotencyKey(ctx)[:8], nil
	})
	if err != nil {
		panic(err) // the name is valid
	}
	return t
}

func call(name, args string) agentloop.ToolCall {
	return agentloop.ToolCall{Name: name, Args: json.RawMessage(args)}
}

// weatherAgent streams its text, calls its weather tool twice in one
// turn, then answers in three deltas; each model call uses some tokens.
func weatherAgent(c *counter) *agentloop.Agent {
	model := script(c, "model", func(n int, _ *agentloop.Request) []agentloop.Chunk {
		if n == 0 {
			return []agentloop.Chunk{agentloop.TextDelta{Text: "Look"}, agentloop.TextDelta{Text: "ing."},
				call("weather", `{"city":"Paris"}`), call("weather", `{"city":"Oslo"}`), agentloop.Usage{Input: 10, Output: 5}}
		}
		return []agentloop.Chunk{agentloop.TextDelta{Text: "Sunny "}, agentloop.TextDelta{Text: "in "},
			agentloop.TextDelta{Text: "both."}, agentloop.Usage{Input: 20, Output: 4}}
	})
	return &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{countedTool(c, "weather")}}
}

// approvalAgent's transfer tool needs approval; its model asks for one
// transfer, then answers "Transferred.".
func approvalAgent(c *counter) *agentloop.Agent {
	transfer := countedTool(c, "transfer")
	transfer.NeedsApproval = true
	model := script(c, "model", func(n int, _ *agentloop.Request) []agentloop.Chunk {
		if n == 0 {
			return []agentloop.Chunk{call("transfer", `{}`)}
		}
		return []agentloop.Chunk{agentloop.TextDelta{Text: "Transferred."}}
	})
	return &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{transfer}}
}

// nestedAgent is a lead agent whose researcher sub-agent (an AgentTool)
// looks a price up, then pays it with a tool that needs approval, then
// reports back; every model call uses 10 input and 1 output tokens.
func nestedAgent(c *counter) *agentloop.Agent {
	usage := agentloop.Usage{Input: 10, Output: 1}
	pay := countedTool(c, "pay")
	pay.NeedsApproval = true
	sub := &agentloop.Agent{Name: "researcher", Tools: []*agentloop.Tool{countedTool(c, "lookup"), pay},
		Model: script(c, "researcher model", func(n int, _ *agentloop.Request) []agentloop.Chunk {
			switch n {
			case 0:
				return []agentloop.Chunk{call("lookup", `{}`), usage}
			case 1:
				return []agentloop.Chunk{call("pay", `{}`), usage}
			}
			return []agentloop.Chunk{agentloop.TextDelta{Text: "paid 5"}, usage}
		})}
	return &agentloop.Agent{Name: "lead", Tools: []*agentloop.Tool{agentTool(sub)},
		Model: script(c, "lead model", func(n int, _ *agentloop.Request) []agentloop.Chunk {
			if n == 0 {
				return []agentloop.Chunk{call("researcher", `{"task":"pay 5"}`), usage}
			}
			return []agentloop.Chunk{agentloop.TextDelta{Text: "The researcher paid."}, usage}
		})}
}

// locatorAgent is a lead agent whose locator sub-agent asks the client
// for the user's location (a client tool) and reports it.
func locatorAgent(c *counter) *agentloop.Agent {
	loc, err := agentloop.NewClientTool("get_location", "Where the user is.", nil)
	if err != nil {
		panic(err)
	}
	lastResult := func(req *agentloop.Request) string {
		return req.Messages[len(req.Messages)-1].Parts[0].ToolResult.Content
	}
	sub := &agentloop.Agent{Name: "locator", Tools: []*agentloop.Tool{loc},
		Model: script(c, "locator model", func(n int, req *agentloop.Request) []agentloop.Chunk {
			if n == 0 {
				return []agentloop.Chunk{call("get_location", `{}`)}
			}
			return []agentloop.Chunk{agentloop.TextDelta{Text: "You are in " + lastResult(req) + "."}}
		})}
	return &agentloop.Agent{Name: "lead", Tools: []*agentloop.Tool{agentTool(sub)},
		Model: script(c, "lead model", func(n int, req *agentloop.Request) []agentloop.Chunk {
			if n == 0 {
				return []agentloop.Chunk{call("locator", `{"task":"where?"}`)}
			}
			return []agentloop.Chunk{agentloop.TextDelta{Text: "Noted: " + lastResult(req)}}
		})}
}

// helperAgent is a lead agent that calls its helper sub-agent once (which
// answers at once), then answers "done"; the lead's calls use 1 input and
// 1 output token each, the helper's 7 and 2.
func helperAgent(c *counter) *agentloop.Agent {
	sub := &agentloop.Agent{Name: "helper", Model: script(c, "helper model", func(int, *agentloop.Request) []agentloop.Chunk {
		return []agentloop.Chunk{agentloop.TextDelta{Text: "helped"}, agentloop.Usage{Input: 7, Output: 2}}
	})}
	return &agentloop.Agent{Name: "lead", Tools: []*agentloop.Tool{agentTool(sub)},
		Model: script(c, "lead model", func(n int, _ *agentloop.Request) []agentloop.Chunk {
			if n == 0 {
				return []agentloop.Chunk{call("helper", `{"task":"help"}`), agentloop.Usage{Input: 1, Output: 1}}
			}
			return []agentloop.Chunk{agentloop.TextDelta{Text: "done"}, agentloop.Usage{Input: 1, Output: 1}}
		})}
}

func agentTool(sub *agentloop.Agent) *agentloop.Tool {
	t, err := agentloop.AgentTool(sub, agentloop.AgentToolOptions{})
	if err != nil {
		panic(err) // the sub-agents above are valid
	}
	return t
}

// StepTurns is the number of model calls of [Benchmark]'s run that each
// call a tool: with the tool calls, a 200-step run (plus the answer's
// model call).
const StepTurns = 100

// stepsAgent's model calls tool "noop" on each of its first StepTurns
// turns, then answers "done".
func stepsAgent() *agentloop.Agent {
	noop, err := agentloop.NewRawTool("noop", "Nothing.", nil, func(context.Context, json.RawMessage) (string, error) { return "ok", nil })
	if err != nil {
		panic(err)
	}
	model := agentloop.ModelFunc(func(_ context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if Replies(req) < StepTurns {
				yield(call("noop", `{}`), nil)
				return
			}
			yield(agentloop.TextDelta{Text: "done"}, nil)
		}
	})
	return &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{noop}, MaxTurns: StepTurns + 1}
}
