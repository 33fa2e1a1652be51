using CoapNet.Channels;

namespace CoapNet.Messaging.Retransmission;

/// <summary>CoCoA (draft-ietf-core-cocoa-03); see <see cref="CoapRetransmissionPolicy.Cocoa"/> and <see cref="CocoaPeerRetransmission"/>.</summary>
internal sealed class CocoaRetransmissionPolicy : CoapRetransmissionPolicy
{
    private readonly TimeSpan _maxTimeout;
    private readonly bool _weakEstimator;
    private readonly bool _congestionWindow;

    /// <summary>The bound on every timeout, as configured.</summary>
    internal TimeSpan MaxTimeout => _maxTimeout;

    public CocoaRetransmissionPolicy(CocoaOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();

        // Copied: the options are mutable, and every peer's state must keep the settings it was made with.
        _maxTimeout = options.MaxTimeout;
        _weakEstimator = options.WeakEstimator;
        _congestionWindow = options.CongestionWindow;
    }

    public override CoapPeerRetransmission CreatePeerState(CoapPeer peer, CoapTransmissionParameters parameters, TimeProvider timeProvider)
    {
        ArgumentNullException.ThrowIfNull(parameters);
        ArgumentNullException.ThrowIfNull(timeProvider);
        return new CocoaPeerRetransmission(parameters, timeProvider, _maxTimeout, _weakEstimator, _congestionWindow ? new CongestionWindow(parameters.NStart, timeProvider) : null);
    }
}
