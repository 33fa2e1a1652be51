using System.Globalization;
using System.Text;
using System.Text.Unicode;
using CoapNet.Messages;

namespace CoapNet.Cli;

/// <summary>
/// One message as libcoap's coap_show_pdu prints it, so a dump from this tool reads like one from
/// coap-client -v: <c>v:1 t:CON c:GET i:7d34 {c0ffee01} [ Uri-Path:hello ] :: 'payload'</c>, and
/// <c>v:Reliable c:GET {c0ffee01} [ ... ]</c> for CoAP over TCP, which has no type or Message ID (RFC 8323).
/// </summary>
internal static class WireFormat
{
    /// <summary>Formats a message.</summary>
    /// <param name="message">The message.</param>
    /// <param name="reliable">True for a stream transport (coap+tcp).</param>
    /// <returns>The line, without a newline.</returns>
    public static string Format(CoapMessage message, bool reliable)
    {
        StringBuilder line = new();
        if (reliable)
        {
            line.Append("v:Reliable");
        }
        else
        {
            line.Append("v:1 t:").Append(message.Type switch
            {
                CoapMessageType.Confirmable => "CON",
                CoapMessageType.NonConfirmable => "NON",
                CoapMessageType.Acknowledgement => "ACK",
                _ => "RST",
            });
        }

        // libcoap names request methods and prints every other code dotted (2.05, 0.00, 7.01).
        string code = message.Code.ToString();
        line.Append(" c:").Append(message.Code.IsRequest ? message.Code.Name : code.Length > 4 ? code[..4] : code);
        if (!reliable)
        {
            line.Append(" i:").Append(message.MessageId.ToString("x4", CultureInfo.InvariantCulture));
        }

        line.Append(" {").Append(Convert.ToHexStringLower(message.Token.Span)).Append("} [");
        if (message.HasOptions)
        {
            bool first = true;
            foreach (CoapOptionEntry option in message.Options)
            {
                line.Append(first ? " " : ", ");
                AppendOption(line, option, message.Code);
                first = false;
            }
        }

        line.Append(" ]");
        if (!message.Payload.IsEmpty)
        {
            AppendPayload(line, message.Payload.Span);
        }

        return line.ToString();
    }

    private static void AppendOption(StringBuilder line, CoapOptionEntry option, CoapCode code)
    {
        // RFC 8323 section 5: each signal has its own option numbers, which mean nothing else elsewhere.
        string? signalOption = code.IsSignaling ? (code.Value, (ushort)option.Number) switch
        {
            (0xE1, 2) => "Max-Message-Size",
            (0xE1, 4) => "Block-Wise-Transfer",
            (0xE2 or 0xE3, 2) => "Custody",
            (0xE4, 2) => "Alternative-Address",
            (0xE4, 4) => "Hold-Off",
            (0xE5, 2) => "Bad-CSM-Option",
            _ => null,
        } : null;
        if (signalOption is null)
        {
            line.Append(option.Name).Append(':').Append(FormatValue(option));
            return;
        }

        line.Append(signalOption).Append(':');
        if (signalOption == "Alternative-Address")
        {
            line.Append(option.GetString());
        }
        else if (!option.Value.IsEmpty && option.TryGetUInt(out uint value))
        {
            line.Append(value.ToString(CultureInfo.InvariantCulture));
        }
    }

    private static string FormatValue(CoapOptionEntry option)
    {
        switch (option.Number)
        {
            case CoapOptionNumber.ContentFormat or CoapOptionNumber.Accept when option.TryGetUInt(out uint format) && format <= ushort.MaxValue:
                return ContentFormats.Describe((ushort)format);
            case CoapOptionNumber.Block1 or CoapOptionNumber.Block2 when option.TryGetUInt(out uint block):
                // libcoap's NUM/M/SIZE, with '_' for a last block (RFC 7959 section 2.2); SZX 7 is no size but BERT, a
                // block of several KiB whose number counts KiB (RFC 8323 section 6).
                return string.Create(CultureInfo.InvariantCulture, $"{block >> 4}/{((block & 0x8) != 0 ? 'M' : '_')}/{((block & 0x7) == 7 ? "BERT" : (16 << (int)(block & 0x7)).ToString(CultureInfo.InvariantCulture))}");
        }

        return option.ToOption() switch
        {
            UIntOption number => number.Value.ToString(CultureInfo.InvariantCulture),
            StringOption text => text.Value,
            EmptyOption => string.Empty,
            OpaqueOption opaque => "0x" + Convert.ToHexStringLower(opaque.Value.Span),
            _ => Convert.ToHexStringLower(option.Value.Span),
        };
    }

    private static void AppendPayload(StringBuilder line, ReadOnlySpan<byte> payload)
    {
        if (IsPrintable(payload))
        {
            // One line per message: line breaks and tabs in text are shown escaped.
            string text = Encoding.UTF8.GetString(payload).Replace("\r", "\\r", StringComparison.Ordinal)
                .Replace("\n", "\\n", StringComparison.Ordinal).Replace("\t", "\\t", StringComparison.Ordinal);
            line.Append(" :: '").Append(text).Append('\'');
        }
        else
        {
            line.Append(" :: binary data length ").Append(payload.Length.ToString(CultureInfo.InvariantCulture))
                .Append(" <<").Append(Convert.ToHexStringLower(payload)).Append(">>");
        }
    }

    // Text is valid UTF-8 without control characters other than line breaks and tabs; anything else is shown as binary.
    private static bool IsPrintable(ReadOnlySpan<byte> payload)
    {
        foreach (byte b in payload)
        {
            if (b is (< 0x20 and not ((byte)'\n' or (byte)'\r' or (byte)'\t')) or 0x7f)
            {
                return false;
            }
        }

        return Utf8.IsValid(payload);
    }
}
