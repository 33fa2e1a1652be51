using Microsoft.Extensions.Logging;

namespace CoapNet.Dtls;

/// <summary>What the DTLS server and client transports share: session bounds, ageing, record size, clock and logging.</summary>
public abstract class DtlsOptions
{
    private protected DtlsOptions()
    {
    }

    /// <summary>
    /// The most established sessions kept at once (default 150,000, Californium's bound). Past it a new handshake is
    /// refused (its ClientHello is dropped, and the client tries again later) until a session closes or ages out;
    /// sessions are never evicted to make room, so a flood of handshakes cannot push out the devices already connected.
    /// </summary>
    public int MaxSessions { get; set; } = 150_000;

    /// <summary>
    /// How long a session may go without receiving an authenticated record before it is closed and forgotten
    /// (default 30 minutes; a device that sleeps longer handshakes again). Measured on <see cref="TimeProvider"/>.
    /// </summary>
    public TimeSpan SessionIdleTimeout { get; set; } = TimeSpan.FromMinutes(30);

    /// <summary>The most handshakes under way at once (default 64); each holds a thread while it waits for the peer's next flight.</summary>
    public int MaxConcurrentHandshakes { get; set; } = 64;

    /// <summary>How long a handshake may take in all before it is abandoned (default 30 s, RFC 6347 section 4.2.4 retransmits within it).</summary>
    public TimeSpan HandshakeTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// The largest datagram sent or received in an established session, in bytes (default 1,500: a CoAP message of
    /// 1,152 bytes, RFC 7252 section 4.6, plus DTLS's 13-byte header and cipher overhead). A larger one received is
    /// dropped; a larger plaintext to send is refused.
    /// </summary>
    public int MaxDatagramSize { get; set; } = 1500;

    /// <summary>The clock that ages sessions and rotates cookie secrets (default <see cref="TimeProvider.System"/>).</summary>
    public TimeProvider TimeProvider { get; set; } = TimeProvider.System;

    /// <summary>Where handshakes, failures and refusals are logged; null for none. Keys are never logged.</summary>
    public ILoggerFactory? LoggerFactory { get; set; }

    /// <summary>Checks the shared settings.</summary>
    /// <exception cref="ArgumentException">A setting is out of range; the message names it.</exception>
    private protected void ValidateShared()
    {
        Require(MaxSessions >= 1, nameof(MaxSessions), "must be at least 1");
        Require(SessionIdleTimeout > TimeSpan.Zero, nameof(SessionIdleTimeout), "must be positive");
        Require(MaxConcurrentHandshakes >= 1, nameof(MaxConcurrentHandshakes), "must be at least 1");
        Require(HandshakeTimeout > TimeSpan.Zero && HandshakeTimeout.TotalMilliseconds <= int.MaxValue, nameof(HandshakeTimeout), "must be positive and under 24 days");
        Require(MaxDatagramSize is >= 256 and <= 16_384 + 256, nameof(MaxDatagramSize), "must be between 256 and 16,640 bytes (a DTLS record carries at most 16,384 bytes of plaintext)");
        Require(TimeProvider is not null, nameof(TimeProvider), "must not be null");
    }

    private protected static void Require(bool condition, string name, string problem)
    {
        if (!condition)
        {
            throw new ArgumentException($"{name} {problem}.", name);
        }
    }
}
