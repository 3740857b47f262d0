package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

type weatherArgs struct {
	City string `json:"city" jsonschema:"description=City name, e.g. Paris"`
}

type weather struct {
	City        string `json:"city"`
	Condition   string `json:"condition"`
	TempCelsius int    `json:"temp_c"`
}

type addArgs struct {
	A float64 `json:"a" jsonschema:"description=First number"`
	B float64 `json:"b" jsonschema:"description=Second number"`
}

// demoTools returns the tools the quickstart agent offers.
func demoTools() ([]*agentloop.Tool, error) {
	getWeather, err := agentloop.NewTool("get_weather", "Get today's weather forecast for a city.",
		func(ctx context.Context, in weatherArgs) (weather, error) {
			if strings.TrimSpace(in.City) == "" {
				return weather{}, fmt.Errorf("city is empty")
			}
			// Deterministic fake forecast, so runs are reproducible.
			h := fnv.New32a()
			h.Write([]byte(strings.ToLower(in.City)))
			n := h.Sum32()
			conditions := []string{"sunny", "cloudy", "rainy", "windy"}
			return weather{City: in.City, Condition: conditions[n%4], TempCelsius: int(n%25) + 5}, nil
		})
	if err != nil {
		return nil, err
	}
	add, err := agentloop.NewTool("add", "Add two numbers.", func(ctx context.Context, in addArgs) (map[string]float64, error) {
		return map[string]float64{"sum": in.A + in.B}, nil
	})
	if err != nil {
		return nil, err
	}
	return []*agentloop.Tool{getWeather, add}, nil
}

var (
	sumPattern  = regexp.MustCompile(`(-?\d+(?:\.\d+)?)\s*\+\s*(-?\d+(?:\.\d+)?)`)
	cityPattern = regexp.MustCompile(`\bin ([A-Z][a-zA-Z]+)`)
)

// simulator is the built-in model used when no LLM is configured: it reads
// the latest user message, calls the tools a real model would, and answers
// from their results.
func simulator() *simtest.Model {
	return simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == agentloop.RoleTool {
			var b strings.Builder
			b.WriteString("Here is what the tools said: ")
			for i, p := range last.Parts {
				if p.Type != agentloop.PartToolResult {
					continue
				}
				if i > 0 {
					b.WriteString("; ")
				}
				fmt.Fprintf(&b, "%s returned %s", p.ToolResult.Name, p.ToolResult.Content)
			}
			b.WriteString(". (This answer comes from the built-in simulator, not an LLM.)")
			return []simtest.Step{simtest.Text(b.String()), simtest.Usage(40, 25)}, nil
		}
		text := last.Text()
		var steps []simtest.Step
		calls := 0
		if m := cityPattern.FindStringSubmatch(text); m != nil {
			steps = append(steps, simtest.Call("", "get_weather", map[string]string{"city": m[1]}))
			calls++
		}
		if m := sumPattern.FindStringSubmatch(text); m != nil {
			a, _ := strconv.ParseFloat(m[1], 64)
			b, _ := strconv.ParseFloat(m[2], 64)
			steps = append(steps, simtest.Call("", "add", map[string]float64{"a": a, "b": b}))
			calls++
		}
		if calls == 0 {
			return []simtest.Step{simtest.Text("I am the built-in simulator: ask me for the weather in a city or to add two numbers, e.g. \"" + demoPrompt + "\""), simtest.Usage(30, 12)}, nil
		}
		intro := []simtest.Step{simtest.Reasoning("The user asked: " + text + " I will use my tools."), simtest.Text("Let me check.")}
		return append(append(intro, steps...), simtest.Usage(30, 12)), nil
	})
}
