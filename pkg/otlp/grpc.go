package otlp

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// GRPCServerOptions are the options of a gRPC server that hosts the receiver (RegisterGRPC): a
// message over MaxBodyBytes is refused with ResourceExhausted before it is read whole, and a call
// whose message has not arrived within BodyTimeout ends with DeadlineExceeded.
func (r *Receiver) GRPCServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(int(r.cfg.MaxBodyBytes)), grpc.InTapHandle(r.bound)}
}

// errCallTimeout is the cause of a call cut off by BodyTimeout.
var errCallTimeout = errors.New("the export did not arrive within [otlp] body_timeout")

// bound gives each call BodyTimeout, its message's reading included: gRPC reads a unary call's
// message before any interceptor runs, and its stream reads on this context. An exporter's own
// shorter deadline still applies.
func (r *Receiver) bound(ctx context.Context, _ *tap.Info) (context.Context, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, r.cfg.BodyTimeout, errCallTimeout)
	// The stream cancels its context when the call ends, which stops the timer; cancel is called
	// then too, for form.
	context.AfterFunc(ctx, cancel)
	return ctx, nil
}

// RegisterGRPC registers the receiver's logs, metrics and traces services on s (OTLP/gRPC, the
// clients' "grpc" protocol; 127.0.0.1:4317 by convention).
func (r *Receiver) RegisterGRPC(s *grpc.Server) {
	plogotlp.RegisterGRPCServer(s, &grpcLogs{r: r})
	pmetricotlp.RegisterGRPCServer(s, &grpcMetrics{r: r})
	ptraceotlp.RegisterGRPCServer(s, &grpcTraces{})
}

type grpcLogs struct {
	plogotlp.UnimplementedGRPCServer
	r *Receiver
}

func (g grpcLogs) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	g.r.stats.requests.Add(1)
	if err := g.r.enqueue(work{logs: req.Logs(), isLogs: true}); err != nil {
		g.r.stats.rejected.Add(1)
		return plogotlp.NewExportResponse(), status.Error(codes.Unavailable, err.Error())
	}
	return plogotlp.NewExportResponse(), nil
}

type grpcMetrics struct {
	pmetricotlp.UnimplementedGRPCServer
	r *Receiver
}

func (g grpcMetrics) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	g.r.stats.requests.Add(1)
	if err := g.r.enqueue(work{metrics: req.Metrics()}); err != nil {
		g.r.stats.rejected.Add(1)
		return pmetricotlp.NewExportResponse(), status.Error(codes.Unavailable, err.Error())
	}
	return pmetricotlp.NewExportResponse(), nil
}

// grpcTraces accepts spans and drops them, as the HTTP path does.
type grpcTraces struct {
	ptraceotlp.UnimplementedGRPCServer
}

func (grpcTraces) Export(context.Context, ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	return ptraceotlp.NewExportResponse(), nil
}
