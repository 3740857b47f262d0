package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/durable/temporalrun"
)

// This file runs the chats' runs on Temporal (-temporal HOST:PORT,
// durable/temporalrun): each run is a workflow of the server's "default"
// namespace (registered when missing) on one task queue, and every
// replica runs a worker of it beside its HTTP server, so any replica may
// run, and finish, any run.

// temporalQueue is the task queue of webchat's runs.
const temporalQueue = "agentloop-webchat"

// temporalHeartbeat is the heartbeat timeout of the runs' model and tool
// calls: how soon a call of a replica that died moves to another one.
const temporalHeartbeat = 10 * time.Second

// temporalEngine is a webchat process's Temporal client and worker.
type temporalEngine struct {
	client client.Client
	worker worker.Worker
}

// newTemporal connects to the Temporal server at hostPort, registers the
// "default" namespace when missing, and returns the runner of agent's
// runs, whose items go to onItem (the chat server's RunItem); start
// starts the worker once the chat server is ready.
func newTemporal(ctx context.Context, hostPort string, agent *agentloop.Agent, onItem func(string, agentloop.Item, error), logger *slog.Logger) (*temporalEngine, *temporalrun.Runner, error) {
	tl := tlog.NewStructuredLogger(logger.With("component", "temporal"))
	nc, err := client.NewNamespaceClient(client.Options{HostPort: hostPort, Logger: tl})
	if err != nil {
		return nil, nil, fmt.Errorf("temporal %s: %w", hostPort, err)
	}
	err = nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{Namespace: "default",
		WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)})
	nc.Close()
	var exists *serviceerror.NamespaceAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return nil, nil, fmt.Errorf("temporal %s: registering the namespace \"default\": %w", hostPort, err)
	}
	c, err := client.DialContext(ctx, client.Options{HostPort: hostPort, Namespace: "default", Logger: tl})
	if err != nil {
		return nil, nil, fmt.Errorf("temporal %s: %w", hostPort, err)
	}
	// A namespace just registered is served once the server's caches
	// know it (seconds).
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		_, err := c.DescribeTaskQueue(ctx, temporalQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		var missing *serviceerror.NamespaceNotFound
		if err == nil || !errors.As(err, &missing) {
			break
		}
		select {
		case <-ctx.Done():
			c.Close()
			return nil, nil, fmt.Errorf("temporal %s: waiting for the namespace \"default\": %w", hostPort, ctx.Err())
		case <-time.After(wait):
		}
	}
	r, err := temporalrun.New(agent, temporalrun.Options{Name: "webchat", TaskQueue: temporalQueue, Client: c,
		OnItem: onItem, Heartbeat: temporalHeartbeat})
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	w, err := r.Worker(c, worker.Options{})
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return &temporalEngine{client: c, worker: w}, r, nil
}

// start starts the worker: from then on this replica runs runs.
func (e *temporalEngine) start() error {
	if err := e.worker.Start(); err != nil {
		return fmt.Errorf("temporal worker: %w", err)
	}
	return nil
}

// close stops the worker (the calls in flight are cut, and retried by
// another replica) and the client.
func (e *temporalEngine) close() {
	e.worker.Stop()
	e.client.Close()
}
