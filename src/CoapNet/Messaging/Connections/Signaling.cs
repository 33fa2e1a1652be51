using System.Text;
using CoapNet.Messages;

namespace CoapNet.Messaging.Connections;

/// <summary>
/// The signaling messages of RFC 8323 section 5 (codes 7.xx) and their options, whose numbers are
/// scoped to the signal code (section 5.2): 2 and 4 mean different things in a CSM, a Ping or a Release.
/// </summary>
internal static class Signaling
{
    /// <summary>CSM option 2, Max-Message-Size (section 5.3.1), an unsigned integer of 0-4 bytes.</summary>
    public const CoapOptionNumber MaxMessageSize = (CoapOptionNumber)2;

    /// <summary>CSM option 4, Block-Wise-Transfer (section 5.3.2), empty.</summary>
    public const CoapOptionNumber BlockWiseTransfer = (CoapOptionNumber)4;

    /// <summary>Ping and Pong option 2, Custody (section 5.4), empty.</summary>
    public const CoapOptionNumber Custody = (CoapOptionNumber)2;

    /// <summary>Abort option 2, Bad-CSM-Option (section 5.6), the number of the CSM option that was not understood.</summary>
    public const CoapOptionNumber BadCsmOption = (CoapOptionNumber)2;

    /// <summary>
    /// Our CSM: Max-Message-Size, and Block-Wise-Transfer, which offers BERT (RFC 8323 sections 5.3.2
    /// and 6): when the peer offers it too, blocks of SZX 7 carry as many KiB as its Max-Message-Size allows.
    /// </summary>
    public static CoapMessage Csm(int maxMessageSize)
    {
        CoapMessage csm = new() { Code = CoapCode.Csm };
        csm.Options.Add(MaxMessageSize, (uint)maxMessageSize);
        csm.Options.AddEmpty(BlockWiseTransfer);
        return csm;
    }

    /// <summary>A Pong answering <paramref name="ping"/>: the same token, and Custody when the Ping had it (section 5.4).</summary>
    public static CoapMessage Pong(CoapMessage ping)
    {
        CoapMessage pong = new() { Code = CoapCode.Pong, Token = ping.Token };
        if (ping.HasOption(Custody))
        {
            pong.Options.AddEmpty(Custody);
        }

        return pong;
    }

    /// <summary>An Abort with a diagnostic payload and, for a bad CSM, the offending option (section 5.6).</summary>
    public static CoapMessage Abort(string diagnostic, CoapOptionNumber? badCsmOption)
    {
        CoapMessage abort = new() { Code = CoapCode.Abort, Payload = Encoding.UTF8.GetBytes(diagnostic) };
        if (badCsmOption is CoapOptionNumber number)
        {
            abort.Options.Add(BadCsmOption, (uint)number);
        }

        return abort;
    }

    /// <summary>A Release: we close once this is sent (section 5.5).</summary>
    public static CoapMessage Release() => new() { Code = CoapCode.Release };

    /// <summary>
    /// Reads a CSM (section 5.3). Unknown elective (even) options are ignored; an unknown critical
    /// (odd) option, or a known one with an invalid value, makes it invalid, with that option named.
    /// </summary>
    /// <returns>True when valid; <paramref name="maxMessageSize"/> is null when the CSM leaves it unchanged.</returns>
    public static bool TryReadCsm(CoapMessage csm, out uint? maxMessageSize, out bool blockWise, out CoapOptionNumber badOption, out string why)
    {
        maxMessageSize = null;
        blockWise = false;
        badOption = default;
        why = string.Empty;
        if (!csm.HasOptions)
        {
            return true;
        }

        foreach (CoapOptionEntry option in csm.Options.AsSpan())
        {
            if (option.Number == MaxMessageSize)
            {
                if (!option.TryGetUInt(out uint value))
                {
                    badOption = option.Number;
                    why = $"Max-Message-Size has {option.Value.Length} bytes; it is an unsigned integer of at most 4 (RFC 8323 section 5.3.1).";
                    return false;
                }

                maxMessageSize = value;
            }
            else if (option.Number == BlockWiseTransfer)
            {
                blockWise = true;
            }
            else if (((int)option.Number & 1) == 1)
            {
                badOption = option.Number;
                why = $"The CSM carries the unknown critical option {(int)option.Number} (RFC 8323 section 5.3).";
                return false;
            }
        }

        return true;
    }

    /// <summary>The diagnostic text of an Abort or Release payload, for the log and the exception.</summary>
    public static string Diagnostic(CoapMessage signal) => signal.Payload.IsEmpty ? "(no diagnostic)" : signal.GetPayloadString();
}
