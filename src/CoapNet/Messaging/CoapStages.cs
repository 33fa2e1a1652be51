using CoapNet.Messages;
using CoapNet.Observe;

namespace CoapNet.Messaging;

/// <summary>
/// What a stage may need from the endpoint it is made for: the endpoint's options and, on a server, its routing's
/// early refusal of an upload and its list of observers. A stage takes what it needs in its constructor.
/// </summary>
/// <param name="Options">The endpoint's options (block-wise settings, message size, clock).</param>
/// <param name="UploadCheck">A server's check of an upload's first block (RFC 7959 section 2.5), or null on a client.</param>
/// <param name="Observers">A server's observers (RFC 7641), or null on an endpoint that serves no observations.</param>
internal sealed record StageContext(CoapEndpointOptions Options, Func<CoapMessage, CoapMessage?>? UploadCheck = null, ObservationRegistry? Observers = null);

/// <summary>The stage list of an endpoint, from the application down, and the default one.</summary>
internal static class CoapStages
{
    /// <summary>
    /// From the application down: block-wise joins and splits bodies (RFC 7959); Observe numbers notifications
    /// and, on the way in, drops stale ones before any block of theirs is fetched (RFC 7641); No-Response
    /// (RFC 7967) decides about what would actually be sent, after Observe has registered an observer and numbered a
    /// notification (section 2: the registration's option covers its notifications, so an observer asking for errors
    /// only is still registered), and on a client it sees each request as it goes out, block-wise follow-ups included.
    /// Echo (RFC 9175 section 2) comes last, nearest the wire. It sees each message as it travels, every Block1 block
    /// before block-wise joins it: a challenged first block never reaches block-wise, so no upload is kept for an
    /// unverified peer, and its repetition with the Echo value starts the upload cleanly as block 0 (RFC 9175 section
    /// 2.4, item 1; RFC 7959 section 2.5). Its amplification check measures each block as it goes out, not a whole body
    /// (RFC 9175 section 2.4, item 3), after No-Response has dropped what is not sent, and its 4.01 challenge goes out
    /// even to a request declining 4.xx, or it could never be answered. On a client it repeats a challenged block, or
    /// block-wise follow-up, by itself, so block-wise sees only the answer to the repetition. Q-Block (RFC 9177), when
    /// enabled, comes first, above block-wise: it sees a whole response body before block-wise would cut it into Block2
    /// blocks, and a whole request body before block-wise would send it in Block1 blocks; block-wise passes the Q-Block
    /// options' requests and responses through untouched, and carries the fall-back when a peer refuses Q-Block.
    /// </summary>
    /// <param name="context">What the stages need from their endpoint.</param>
    /// <returns>A new list of new stages: stages keep per-endpoint state, so no two endpoints share one.</returns>
    public static CoapStage[] CreateDefault(StageContext context)
    {
        CoapEndpointOptions options = context.Options;
        CoapStage blockwise = new Blockwise.BlockwiseStage(options.Blockwise, options.MaxMessageSize, options.TimeProvider, context.UploadCheck);
        CoapStage observe = new ObserveStage(options.TimeProvider, context.Observers);
        CoapStage noResponse = new NoResponse.NoResponseStage();
        CoapStage echo = new Freshness.EchoStage(options.Echo, options.TimeProvider);
        if (!options.QBlock.Enabled)
        {
            return [blockwise, observe, noResponse, echo];
        }

        CoapStage qblock = new QBlock.QBlockStage(
            options.QBlock,
            options.Blockwise,
            options.TimeProvider,
            options.ResponseTimeout ?? options.TransmissionParameters.MaxTransmitWait,
            options.Random ?? Random.Shared,
            context.UploadCheck);
        return [qblock, blockwise, observe, noResponse, echo];
    }

    /// <summary>The stages <paramref name="options"/> asks for, checked: none missing, none twice.</summary>
    /// <exception cref="ArgumentException">The list is null, holds a null, or holds a stage twice.</exception>
    public static CoapStage[] Create(CoapEndpointOptions options, StageContext context)
    {
        IReadOnlyList<CoapStage>? made = (options.Stages ?? CreateDefault)(context);
        if (made is null)
        {
            throw new ArgumentException("The stage factory returned no list.", nameof(options));
        }

        CoapStage[] stages = new CoapStage[made.Count];
        for (int i = 0; i < stages.Length; i++)
        {
            CoapStage stage = made[i] ?? throw new ArgumentException($"Stage {i} of the endpoint's stage list is null.", nameof(options));
            if (Array.IndexOf(stages, stage, 0, i) >= 0)
            {
                throw new ArgumentException($"The stage {stage.GetType().Name} is in the endpoint's stage list twice; a message would pass it twice.", nameof(options));
            }

            stages[i] = stage;
        }

        return stages;
    }
}
