using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>
/// The separate-response delay's timer (RFC 7252 section 5.2.2) runs only while a confirmable request waits for its
/// handler: an idle server, or one whose requests are answered at once, has no timer to fire (issue 25: every firing
/// wakes a thread-pool worker, which a one-core server pays for), and a slow request still gets its empty ACK within
/// a quarter of the delay after the delay. Virtual time; the count of armed timers is the clock's.
/// </summary>
public sealed class SeparateAckTimerTests : IDisposable
{
    private static readonly TimeSpan Delay = new CoapServerOptions().Endpoint.SeparateResponseDelay!.Value;
    private readonly TaskCompletionSource _release = new();
    private readonly VirtualTimeServer _fixture;

    public SeparateAckTimerTests()
    {
        _fixture = new VirtualTimeServer(server =>
        {
            server.MapGet("/quick", _ => CoapResponse.Content("quick"));
            server.MapGet("/slow", async (_, cancellationToken) =>
            {
                // No ConfigureAwait(false): the handler resumes on the test's scheduler.
                await _release.Task.WaitAsync(cancellationToken);
                return CoapResponse.Content("slow");
            });
        });
    }

    [Fact]
    public void AServerWhoseRequestsWereAnsweredAtOnceHasNoTimerDueOnceTheDelayHasPassed()
    {
        for (ushort id = 1; id <= 20; id++)
        {
            Send("/quick", id);
            _fixture.Settle();
        }

        _fixture.Peer.Received.Should().HaveCount(20).And.OnlyContain(r => r.Parsed.Type == CoapMessageType.Acknowledgement && r.Parsed.Code == CoapCode.Content);

        // One firing after the delay finds nothing waiting and does not set itself again.
        _fixture.Time.Advance(Delay * 2);
        _fixture.Settle();
        TimeSpan? next = _fixture.Time.NextDue;
        if (next is TimeSpan due)
        {
            // What is still armed is the endpoint's slow housekeeping (the idle-peer sweep, 20 s), nothing that ticks.
            (due - _fixture.Time.Elapsed).Should().BeGreaterThan(Delay * 10, "with nothing waiting for its handler, no separate-response timer is armed");
        }
    }

    [Fact]
    public void SlowRequestsArrivingApartEachGetTheirEmptyAckWithinAQuarterOfTheDelayAfterTheDelay()
    {
        TimeSpan apart = TimeSpan.FromMilliseconds(7);
        Dictionary<ushort, TimeSpan> sentAt = [];
        for (ushort id = 1; id <= 10; id++)
        {
            sentAt[id] = _fixture.Time.Elapsed;
            Send("/slow", id);
            _fixture.Settle();
            _fixture.Time.Advance(apart);
            _fixture.Settle();
        }

        Dictionary<ushort, TimeSpan> ackedAt = [];
        for (int step = 0; step < 300 && ackedAt.Count < 10; step++)
        {
            foreach (var received in _fixture.Peer.Received)
            {
                CoapMessage message = received.Parsed;
                if (message.Type == CoapMessageType.Acknowledgement && message.Code == CoapCode.Empty && !ackedAt.ContainsKey(message.MessageId))
                {
                    ackedAt[message.MessageId] = _fixture.Time.Elapsed;
                }
            }

            _fixture.Time.Advance(TimeSpan.FromMilliseconds(1));
            _fixture.Settle();
        }

        ackedAt.Should().HaveCount(10, "every slow confirmable request is acknowledged on its own (RFC 7252 section 5.2.2)");
        foreach ((ushort id, TimeSpan acked) in ackedAt)
        {
            // Read each millisecond: the ACK is seen at most a millisecond after it went out.
            (acked - sentAt[id]).Should().BeGreaterThanOrEqualTo(Delay).And.BeLessThanOrEqualTo(Delay + (Delay / 4) + TimeSpan.FromMilliseconds(1), $"request {id}");
        }

        _release.SetResult();
        _fixture.Settle();
    }

    public void Dispose()
    {
        _release.TrySetResult();
        _fixture.Dispose();
    }

    private void Send(string path, ushort messageId)
    {
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = messageId, Token = new byte[] { (byte)messageId } };
        request.UriPath = path;
        _fixture.Send(request);
    }
}
