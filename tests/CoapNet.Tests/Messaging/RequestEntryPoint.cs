using System.Net;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// One way into the endpoint's request and ping paths: <see cref="CoapEndpoint.SendRequestAsync"/> or the
/// blocking <see cref="CoapEndpoint.SendRequest"/> on its own thread, so one behaviour suite runs through both.
/// </summary>
public abstract class RequestEntryPoint
{
    /// <summary>Only a hung call reaches this bound.</summary>
    public static readonly TimeSpan HangBound = TimeSpan.FromSeconds(10);

    public static RequestEntryPoint Async { get; } = new AsyncEntryPoint();

    public static RequestEntryPoint Sync { get; } = new SyncEntryPoint();

    /// <summary>Starts a request; returns once it is on the wire (or failed at once).</summary>
    internal abstract Task<CoapMessage> SendRequest(MessagingHarness harness, CoapEndpoint endpoint, CoapMessage request, IPEndPoint remote, CancellationToken cancellationToken = default);

    /// <summary>Starts a ping; returns once it is on the wire (or failed at once).</summary>
    internal abstract Task<TimeSpan> Ping(MessagingHarness harness, CoapEndpoint endpoint, IPEndPoint remote, CancellationToken cancellationToken = default);

    private sealed class AsyncEntryPoint : RequestEntryPoint
    {
        internal override Task<CoapMessage> SendRequest(MessagingHarness harness, CoapEndpoint endpoint, CoapMessage request, IPEndPoint remote, CancellationToken cancellationToken = default)
            => endpoint.SendRequestAsync(request, remote, cancellationToken);

        internal override Task<TimeSpan> Ping(MessagingHarness harness, CoapEndpoint endpoint, IPEndPoint remote, CancellationToken cancellationToken = default)
            => endpoint.PingAsync(remote, cancellationToken);

        public override string ToString() => "async";
    }

    private sealed class SyncEntryPoint : RequestEntryPoint
    {
        internal override Task<CoapMessage> SendRequest(MessagingHarness harness, CoapEndpoint endpoint, CoapMessage request, IPEndPoint remote, CancellationToken cancellationToken = default)
            => OnThread(harness, () => endpoint.SendRequest(request, remote, cancellationToken));

        internal override Task<TimeSpan> Ping(MessagingHarness harness, CoapEndpoint endpoint, IPEndPoint remote, CancellationToken cancellationToken = default)
            => OnThread(harness, () => endpoint.Ping(remote, cancellationToken));

        public override string ToString() => "sync";

        private static Task<T> OnThread<T>(MessagingHarness harness, Func<T> call)
        {
            int sent = harness.Network.Sent.Count;
            TaskCompletionSource<T> outcome = new(TaskCreationOptions.RunContinuationsAsynchronously);
            Thread thread = new(() =>
            {
                try
                {
                    outcome.SetResult(call());
                }
                catch (Exception e)
                {
                    outcome.SetException(e);
                }
            })
            {
                IsBackground = true,
                Name = "Blocking CoAP call",
            };
            thread.Start();

            // The virtual world stands still until the call has done its synchronous part.
            Wait.Until(() => outcome.Task.IsCompleted || harness.Network.Sent.Count > sent, "the blocking call to send something or return", HangBound);

            return outcome.Task;
        }
    }
}
