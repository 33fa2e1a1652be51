using CoapNet.Messages;
using CoapNet.Observe;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace CoapNet.Messaging;

/// <summary>
/// What a stage's factory (<see cref="CoapEndpointOptions.UseStage"/>) gets for the endpoint it makes the stage for: that
/// endpoint's options, its clock and where it logs. A factory is called once per endpoint (a server with UDP and TCP
/// endpoints calls it twice), when the endpoint is made.
/// </summary>
public sealed class CoapStageContext
{
    internal CoapStageContext(CoapEndpointOptions options, Func<CoapMessage, CoapMessage?>? uploadCheck = null, ObservationRegistry? observers = null)
    {
        Options = options;
        LoggerFactory = options.LoggerFactory ?? NullLoggerFactory.Instance;
        UploadCheck = uploadCheck;
        Observers = observers;
    }

    /// <summary>The endpoint's options: block-wise settings, message size, transmission parameters. Read them; do not change them.</summary>
    public CoapEndpointOptions Options { get; }

    /// <summary>The endpoint's clock (<see cref="CoapEndpointOptions.TimeProvider"/>): every timer of a stage goes through it, so tests run it in virtual time.</summary>
    public TimeProvider TimeProvider => Options.TimeProvider;

    /// <summary>Where the endpoint logs (<see cref="CoapEndpointOptions.LoggerFactory"/>); a no-op factory when none is set.</summary>
    public ILoggerFactory LoggerFactory { get; }

    /// <summary>A server's check of an upload's first block (RFC 7959 section 2.5), from its routing; null on a client.</summary>
    internal Func<CoapMessage, CoapMessage?>? UploadCheck { get; }

    /// <summary>A server's observers (RFC 7641); null on an endpoint that serves no observations.</summary>
    internal ObservationRegistry? Observers { get; }

    /// <summary>
    /// A new block-wise stage (RFC 7959) with this endpoint's <see cref="CoapEndpointOptions.Blockwise"/> settings, for a
    /// second one under a name of its own: OSCORE (RFC 8613 section 4.1.3.4) has an inner block-wise stage above it (the
    /// built-in <see cref="CoapStageNames.Blockwise"/>, on plaintext) and an outer one below it (on the protected
    /// messages). It keeps its own bodies and uploads. Unlike the built-in one it does not ask a server's routing before
    /// it joins an upload: the request it sees is not the one routing sees.
    /// </summary>
    /// <returns>A stage to return from a factory.</returns>
    public CoapStage CreateBlockwiseStage()
        => new Blockwise.BlockwiseStage(Options, uploadCheck: null, servesApplication: false);
}
