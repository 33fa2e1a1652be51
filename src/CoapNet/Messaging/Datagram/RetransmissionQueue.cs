using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging.Retransmission;

namespace CoapNet.Messaging.Datagram;

/// <summary>
/// The reliability of RFC 7252 section 4.2 for one datagram endpoint: the confirmable messages we sent that
/// await their ACK or RST, each with its timer, timeouts chosen by the peer's <see cref="CoapPeerRetransmission"/>.
/// It decides; the message layer sends, logs and tells the owners, outside any lock.
/// </summary>
/// <remarks>
/// No lock of its own: every member runs under the message layer's lock. That lock must be the one, because
/// <see cref="CoapPeerRetransmission"/> is documented to be called under the endpoint's lock and is also asked for
/// NSTART by <see cref="PeerMessageState.TryTakeSlot"/>, and because the endpoint's <see cref="Random"/> (a seeded
/// one is not thread-safe) also draws the first Message ID of each peer in <see cref="PeerMessageStateTable"/>:
/// one lock keeps both single-threaded and the draws in the order they have always had. Stopping a transmission
/// must also be atomic with the request state that holds an NSTART slot (<c>RequestState.End</c>).
/// </remarks>
internal sealed class RetransmissionQueue
{
    private readonly Dictionary<MessageKey, Transmission> _unacknowledged;
    private readonly DatagramMessageLayer _layer;
    private readonly TimeProvider _time;
    private readonly Random _random;

    /// <param name="layer">The message layer whose CONs these are.</param>
    /// <param name="time">The clock of the timeouts.</param>
    /// <param name="random">The jitter of the first timeout.</param>
    /// <param name="peers">
    /// Which peers' ACKs and RSTs match (<see cref="SessionMatchingComparer"/>); null for the same session only
    /// (<see cref="CoapSessionMatching.Strict"/>).
    /// </param>
    public RetransmissionQueue(DatagramMessageLayer layer, TimeProvider time, Random random, SessionMatchingComparer? peers)
    {
        _unacknowledged = peers is null ? [] : new(new PeerScopedKeyComparer<MessageKey>(peers));
        _layer = layer;
        _time = time;
        _random = random;
    }

    /// <summary>What the timer of a transmission found when it fired.</summary>
    public enum Step
    {
        /// <summary>The transmission had ended meanwhile: nothing to do.</summary>
        None,

        /// <summary>Send the datagram again; the next timeout is armed.</summary>
        Resend,

        /// <summary>MAX_RETRANSMIT reached without an answer: the transmission has ended; tell its owner.</summary>
        GaveUp,
    }

    /// <summary>
    /// Registers a CON and arms its first timeout, chosen by the peer's retransmission policy (RFC 7252 section 4.2
    /// by default). Call before the first send, so an ACK or RST can never arrive for a message not yet registered.
    /// </summary>
    public Transmission Start(MessageKey key, DatagramChannel channel, byte[] datagram, ITransmissionOwner owner, CoapPeerRetransmission retransmission)
    {
        TimeSpan initial = retransmission.GetInitialTimeout(_random);
        Transmission transmission = new(_layer, key, channel, datagram, owner, retransmission, initial, _time.GetTimestamp());
        _unacknowledged[key] = transmission;
        transmission.Timer = _time.CreateTimer(
            static state =>
            {
                Transmission t = (Transmission)state!;
                t.Layer.Retransmit(t);
            },
            transmission,
            initial,
            Timeout.InfiniteTimeSpan);
        return transmission;
    }

    /// <summary>
    /// The ACK or RST with this peer and Message ID arrived: ends its transmission and, for an ACK, gives the peer's
    /// policy the round trip (strong with no retransmission, weak otherwise); a RST is no sample.
    /// </summary>
    /// <returns>The transmission it answers, or null when it matches none (RFC 7252 section 4.2: then it is ignored).</returns>
    public Transmission? Complete(MessageKey key, CoapMessageType type)
    {
        if (!_unacknowledged.TryGetValue(key, out Transmission? transmission))
        {
            return null;
        }

        if (type != CoapMessageType.Acknowledgement)
        {
            Stop(transmission);
            return transmission;
        }

        End(transmission);
        transmission.Retransmission.OnAcknowledged(_time.GetElapsedTime(transmission.FirstSentAt), transmission.Retransmissions);
        return transmission;
    }

    /// <summary>The timer of <paramref name="transmission"/> fired: back off and resend, or give up.</summary>
    public Step Advance(Transmission transmission)
    {
        if (transmission.Done)
        {
            return Step.None;
        }

        if (transmission.Retransmissions >= transmission.Retransmission.MaxRetransmit)
        {
            Stop(transmission);
            return Step.GaveUp;
        }

        // RFC 7252 section 4.2: retransmit and back off (the default policy doubles the timeout).
        transmission.Retransmissions++;
        transmission.Timeout = transmission.Retransmission.GetNextTimeout(transmission.InitialTimeout, transmission.Timeout, transmission.Retransmissions);
        transmission.Timer?.Change(transmission.Timeout, Timeout.InfiniteTimeSpan);
        return Step.Resend;
    }

    /// <summary>Ends the transmission with this key, if any (a canceled ping).</summary>
    public void Stop(MessageKey key)
    {
        if (_unacknowledged.TryGetValue(key, out Transmission? transmission))
        {
            Stop(transmission);
        }
    }

    /// <summary>Ends a transmission without an acknowledgement: reset, given up, or its exchange completed or was canceled.</summary>
    public void Stop(Transmission? transmission)
    {
        if (transmission is null || transmission.Done)
        {
            return;
        }

        End(transmission);
        transmission.Retransmission.OnUnacknowledged(transmission.Retransmissions);
    }

    /// <summary>Ends every transmission (the endpoint is disposed); adds the owner of each to <paramref name="owners"/>.</summary>
    public void StopAll(List<ITransmissionOwner> owners)
    {
        foreach (Transmission transmission in _unacknowledged.Values)
        {
            transmission.Done = true;
            transmission.Timer?.Dispose();
            transmission.Retransmission.OnUnacknowledged(transmission.Retransmissions);
            owners.Add(transmission.Owner);
        }

        _unacknowledged.Clear();
    }

    /// <summary>Ends every transmission to <paramref name="peer"/> (its session is gone); adds the owner of each to <paramref name="owners"/>.</summary>
    public void StopPeer(CoapPeer peer, List<ITransmissionOwner> owners)
    {
        List<Transmission>? ended = null;
        foreach (Transmission transmission in _unacknowledged.Values)
        {
            if (transmission.Key.Remote.Equals(peer))
            {
                (ended ??= []).Add(transmission);
            }
        }

        if (ended is null)
        {
            return;
        }

        foreach (Transmission transmission in ended)
        {
            Stop(transmission);
            owners.Add(transmission.Owner);
        }
    }

    // Every transmission ends here once; the caller tells the peer's policy how (OnAcknowledged or OnUnacknowledged).
    private void End(Transmission transmission)
    {
        transmission.Done = true;
        transmission.Timer?.Dispose();
        _unacknowledged.Remove(transmission.Key);
    }
}
