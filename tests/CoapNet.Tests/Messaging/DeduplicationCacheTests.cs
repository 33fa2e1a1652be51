using System.Net;
using CoapNet.Channels;
using CoapNet.Messaging.Datagram;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// The deduplication cache on its own (RFC 7252 section 4.5): lifetimes, the capacity bound with
/// first-to-expire eviction, and reused slots, whose stale tickets must never write into the entry that
/// took the slot over.
/// </summary>
public class DeduplicationCacheTests
{
    private const long Con = 247_000;
    private const long Non = 145_000;
    private static readonly CoapPeer Peer = CoapPeer.Udp(new IPEndPoint(IPAddress.Loopback, 5683));
    private static readonly CoapPeer Other = CoapPeer.Udp(new IPEndPoint(IPAddress.Loopback, 5684));

    [Fact]
    public void ACopyWithinItsLifetimeIsADuplicateWithTheRecordedReply()
    {
        DeduplicationCache cache = new(16);
        byte[] reply = [0x60, 0x00, 0x00, 0x07];

        cache.TryGetOrAdd(Peer, 7, now: 0, Con, out DeduplicationCache.Ticket ticket, out _, out _).Should().BeFalse();
        cache.Record(ticket, reply);

        cache.TryGetOrAdd(Peer, 7, now: Con - 1, Con, out _, out byte[]? replayed, out _).Should().BeTrue();
        replayed.Should().Equal(reply);
        cache.TryGetOrAdd(Other, 7, now: 1, Con, out _, out _, out _).Should().BeFalse("the key is the peer and the Message ID");
    }

    [Theory]
    [InlineData(DeduplicationCache.InlineReplyLength)]
    [InlineData(DeduplicationCache.InlineReplyLength + 1)]
    [InlineData(1152)]
    public void ARecordedReplyIsACopyOfItsBytesWhateverItsLength(int length)
    {
        // The layer records from a pooled buffer that it reuses at once, so the cache must keep the bytes, not the buffer.
        DeduplicationCache cache = new(16);
        byte[] sent = new byte[length];
        Random.Shared.NextBytes(sent);
        byte[] expected = [.. sent];
        cache.TryGetOrAdd(Peer, 7, now: 0, Con, out DeduplicationCache.Ticket ticket, out _, out _);
        cache.Record(ticket, sent);
        Array.Clear(sent);

        cache.TryGetOrAdd(Peer, 7, now: 1, Con, out _, out byte[]? replayed, out _).Should().BeTrue();
        replayed.Should().Equal(expected);
    }

    [Fact]
    public void AfterItsLifetimeTheSameMessageIdIsNewAgain()
    {
        DeduplicationCache cache = new(16);
        cache.TryGetOrAdd(Peer, 7, now: 0, Non, out DeduplicationCache.Ticket first, out _, out _);
        cache.Record(first, [1]);

        cache.TryGetOrAdd(Peer, 7, now: Non, Non, out DeduplicationCache.Ticket second, out byte[]? reply, out _).Should().BeFalse();
        reply.Should().BeNull();
        cache.Count.Should().Be(1);

        // The first entry's ticket is stale: recording through it must not touch the second entry.
        cache.Record(first, [2]);
        cache.TryGetOrAdd(Peer, 7, now: Non + 1, Non, out _, out reply, out _).Should().BeTrue();
        reply.Should().BeNull();
        cache.Record(second, [3]);
        cache.TryGetOrAdd(Peer, 7, now: Non + 2, Non, out _, out reply, out _).Should().BeTrue();
        reply.Should().Equal(3);
    }

    [Fact]
    public void AFloodOfDistinctMessageIdsStaysWithinTheCapacityAndEvictsWhatExpiresFirst()
    {
        DeduplicationCache cache = new(100);
        cache.TryGetOrAdd(Peer, 1, now: 0, Con, out _, out _, out _);
        cache.TryGetOrAdd(Peer, 2, now: 1, Non, out _, out _, out _);
        for (int id = 3; id < 3 + 99; id++)
        {
            cache.TryGetOrAdd(Other, (ushort)id, now: 2, Con, out _, out _, out _).Should().BeFalse();
            cache.Count.Should().BeLessThanOrEqualTo(100);
        }

        // Full at the 100th entry; the 101st evicted the NON (it expires first, though it came second); a new NON then evicts the oldest CON.
        cache.Evictions.Should().Be(1);
        cache.TryGetOrAdd(Peer, 1, now: 3, Con, out _, out _, out _).Should().BeTrue("the CON expires after the NON");
        cache.TryGetOrAdd(Peer, 2, now: 3, Non, out _, out _, out _).Should().BeFalse("the NON was evicted");
        cache.Evictions.Should().Be(2);
        cache.Count.Should().Be(100);
    }

    [Fact]
    public void AReplyRecordedForAnEvictedEntryGoesNowhere()
    {
        DeduplicationCache cache = new(2);
        cache.TryGetOrAdd(Peer, 1, now: 0, Con, out DeduplicationCache.Ticket evicted, out _, out _);
        cache.TryGetOrAdd(Peer, 2, now: 1, Con, out _, out _, out _);
        cache.TryGetOrAdd(Peer, 3, now: 2, Con, out DeduplicationCache.Ticket third, out _, out _).Should().BeFalse();

        // Message 3 took the slot of message 1; the late reply for message 1 must not become message 3's.
        third.Index.Should().Be(evicted.Index);
        cache.Record(evicted, [9]);
        cache.TryGetOrAdd(Peer, 3, now: 3, Con, out _, out byte[]? reply, out _).Should().BeTrue();
        reply.Should().BeNull();
    }

    [Fact]
    public void ACopyOfTheOldestEntryOfAFullCacheIsStillADuplicate()
    {
        DeduplicationCache cache = new(3);
        for (ushort id = 1; id <= 3; id++)
        {
            cache.TryGetOrAdd(Peer, id, now: id, Con, out _, out _, out _);
        }

        cache.TryGetOrAdd(Peer, 1, now: 10, Con, out _, out _, out _).Should().BeTrue();
        cache.Evictions.Should().Be(0);
        cache.Count.Should().Be(3);
    }

    [Fact]
    public void EveryLiveEntryIsFoundWhileEntriesExpireAndTheIndexGrows()
    {
        // Random lookups over 8,000 keys of 4 peers, one tick apart, against a model: an entry is a duplicate exactly while
        // its lifetime (CON or NON) runs. Up to about 1,200 live entries grow the index from 2,048 places to 4,096, and
        // entries leave it all the time, so its probe runs wrap and shift.
        CoapPeer[] peers = [.. Enumerable.Range(0, 4).Select(i => CoapPeer.Udp(new IPEndPoint(IPAddress.Loopback, 6000 + i)))];
        DeduplicationCache cache = new(5000);
        Dictionary<(int Peer, ushort Id), long> expiries = [];
        Random random = new(39);
        for (long now = 0; now < 40_000; now++)
        {
            (int peer, ushort id) key = (random.Next(peers.Length), (ushort)random.Next(2000));
            long lifetime = random.Next(2) == 0 ? 1500 : 1000;
            bool expected = expiries.TryGetValue(key, out long expiry) && expiry > now;
            cache.TryGetOrAdd(peers[key.peer], key.id, now, lifetime, out _, out _, out _).Should().Be(expected, $"at tick {now}");
            if (!expected)
            {
                expiries[key] = now + lifetime;
            }
        }

        cache.Evictions.Should().Be(0);
        cache.Count.Should().Be(expiries.Values.Count(expiry => expiry > 39_999));
    }

    [Theory]
    [InlineData(300, 1_000_000_000, 400, 20_000)]
    [InlineData(8, 20, 12, 200_000)]
    public void AFullCacheEvictsInArrivalOrderWhateverTheKeys(int capacity, long lifetime, int ids, int lookups)
    {
        // The same against a model of one lifetime and the capacity: expired entries leave first; then, at the capacity,
        // the oldest goes before each lookup unless it is the one looked up (then it is a duplicate). The small case keeps
        // 8 entries in an index of 16 places, so probe runs wrap around its end all the time.
        CoapPeer[] peers = [Peer, Other];
        DeduplicationCache cache = new(capacity);
        LinkedList<((int Peer, ushort Id) Key, long Expiry)> order = new();
        HashSet<(int Peer, ushort Id)> live = [];
        Random random = new(41);
        for (long now = 0; now < lookups; now++)
        {
            (int peer, ushort id) key = (random.Next(peers.Length), (ushort)random.Next(ids));
            while (order.First is { } oldest && oldest.Value.Expiry <= now)
            {
                live.Remove(oldest.Value.Key);
                order.RemoveFirst();
            }

            if (live.Count >= capacity && order.First!.Value.Key != key)
            {
                live.Remove(order.First.Value.Key);
                order.RemoveFirst();
            }

            bool expected = live.Contains(key);
            cache.TryGetOrAdd(peers[key.peer], key.id, now, lifetime, out _, out _, out _).Should().Be(expected, $"at tick {now}");
            if (!expected)
            {
                live.Add(key);
                order.AddLast((key, now + lifetime));
            }
        }

        cache.Count.Should().Be(live.Count);
    }
}
