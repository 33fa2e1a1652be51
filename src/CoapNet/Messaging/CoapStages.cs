using CoapNet.Observe;

namespace CoapNet.Messaging;

/// <summary>
/// An endpoint's chain of stages: the built-in ones and those added with <see cref="CoapEndpointOptions.UseStage"/>, each
/// made by its factory for the endpoint, in order from the application down.
/// </summary>
/// <remarks>
/// The built-in order, from the application down: block-wise joins and splits bodies (RFC 7959); Observe numbers
/// notifications and, on the way in, drops stale ones before any block of theirs is fetched (RFC 7641); No-Response
/// (RFC 7967) decides about what would actually be sent, after Observe has registered an observer and numbered a
/// notification (section 2: the registration's option covers its notifications, so an observer asking for errors only
/// is still registered), and on a client it sees each request as it goes out, block-wise follow-ups included. Echo
/// (RFC 9175 section 2) comes last, nearest the wire. It sees each message as it travels, every Block1 block before
/// block-wise joins it: a challenged first block never reaches block-wise, so no upload is kept for an unverified peer,
/// and its repetition with the Echo value starts the upload cleanly as block 0 (RFC 9175 section 2.4, item 1; RFC 7959
/// section 2.5). Its amplification check measures each block as it goes out, not a whole body (RFC 9175 section 2.4,
/// item 3), after No-Response has dropped what is not sent, and its 4.01 challenge goes out even to a request declining
/// 4.xx, or it could never be answered. On a client it repeats a challenged block, or block-wise follow-up, by itself, so
/// block-wise sees only the answer to the repetition. Q-Block (RFC 9177), when enabled, comes first, above block-wise: it
/// sees a whole response body before block-wise would cut it into Block2 blocks, and a whole request body before
/// block-wise would send it in Block1 blocks; block-wise passes the Q-Block options' requests and responses through
/// untouched, and carries the fall-back when a peer refuses Q-Block.
/// </remarks>
internal static class CoapStages
{
    /// <summary>The built-in stages, from the application down, with their factories (null: off on this endpoint).</summary>
    private static readonly (string Name, Func<CoapStageContext, CoapStage?> Factory)[] BuiltIn =
    [
        (CoapStageNames.QBlock, CreateQBlock),
        (CoapStageNames.Blockwise, static context => new Blockwise.BlockwiseStage(context.Options, context.UploadCheck)),
        (CoapStageNames.Observe, static context => new ObserveStage(context.TimeProvider, context.Observers)),
        (CoapStageNames.NoResponse, static _ => new NoResponse.NoResponseStage()),
        (CoapStageNames.Echo, static context => new Freshness.EchoStage(context.Options.Echo, context.TimeProvider)),
    ];

    /// <summary>True when <paramref name="name"/> is a built-in stage's.</summary>
    public static bool IsBuiltIn(string name)
    {
        foreach ((string builtIn, _) in BuiltIn)
        {
            if (string.Equals(builtIn, name, StringComparison.Ordinal))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>The built-in names, for an error message that lists what a stage may be placed by.</summary>
    public static IEnumerable<string> BuiltInNames()
    {
        foreach ((string name, _) in BuiltIn)
        {
            yield return name;
        }
    }

    /// <summary>Makes the chain <paramref name="registrations"/> describe, around the built-in stages, for one endpoint.</summary>
    /// <returns>The stages from the application down, and the name of each.</returns>
    /// <exception cref="ArgumentException">A factory returned null.</exception>
    public static (CoapStage[] Stages, string[] Names) Create(IReadOnlyList<StageRegistration> registrations, CoapStageContext context)
    {
        List<CoapStage> stages = new(BuiltIn.Length + registrations.Count);
        List<string> names = new(stages.Capacity);
        foreach (StageRegistration registration in registrations)
        {
            if (registration.Position.Where == CoapStagePosition.Placement.AboveAll)
            {
                Add(registration.Name, registration.Factory);
            }
        }

        foreach ((string name, Func<CoapStageContext, CoapStage?> factory) in BuiltIn)
        {
            Add(name, factory);
        }

        foreach (StageRegistration registration in registrations)
        {
            if (registration.Position.Where == CoapStagePosition.Placement.BelowAll)
            {
                Add(registration.Name, registration.Factory);
            }
        }

        return ([.. stages], [.. names]);

        // A stage, with those placed just above it before and those placed just below it after, each in the order added.
        void Add(string name, Func<CoapStageContext, CoapStage?> factory)
        {
            AddPlaced(CoapStagePosition.Placement.Above, name);
            if (IsBuiltIn(name))
            {
                if (factory(context) is { } builtIn)
                {
                    stages.Add(builtIn);
                    names.Add(name);
                }
            }
            else
            {
                stages.Add(factory(context) ?? throw new ArgumentException($"The factory of the stage '{name}' returned null; it must make a stage.", "factory"));
                names.Add(name);
            }

            AddPlaced(CoapStagePosition.Placement.Below, name);
        }

        void AddPlaced(CoapStagePosition.Placement where, string anchor)
        {
            foreach (StageRegistration registration in registrations)
            {
                if (registration.Position.Where == where && string.Equals(registration.Position.Anchor, anchor, StringComparison.Ordinal))
                {
                    Add(registration.Name, registration.Factory);
                }
            }
        }
    }

    private static CoapStage? CreateQBlock(CoapStageContext context)
    {
        CoapEndpointOptions options = context.Options;
        return options.QBlock.Enabled
            ? new QBlock.QBlockStage(
                options.QBlock,
                options.Blockwise,
                options.TimeProvider,
                options.ResponseTimeout ?? options.TransmissionParameters.MaxTransmitWait,
                options.Random ?? Random.Shared,
                context.UploadCheck,
                CoapPaths.From(options.Paths))
            : null;
    }
}

/// <summary>A stage added with <see cref="CoapEndpointOptions.UseStage"/>: its name, its factory and where it goes.</summary>
internal sealed record StageRegistration(string Name, Func<CoapStageContext, CoapStage> Factory, CoapStagePosition Position);
