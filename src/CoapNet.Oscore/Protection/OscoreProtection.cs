using System.Buffers;
using System.Security.Cryptography;
using CoapNet.Messages;
using CoapNet.Oscore.Cose;
using CoapNet.Serialization;

namespace CoapNet.Oscore.Protection;

/// <summary>
/// Turns a CoAP message into an OSCORE message and back (RFC 8613 sections 4, 5 and 8): the Code and the Class E options
/// go into the plaintext with the payload, encrypted with AES-CCM; the Class U options and the OSCORE option stay outer,
/// with POST or FETCH (requests) and 2.04 or 2.05 (responses) as the outer Code.
/// </summary>
internal static class OscoreProtection
{
    /// <summary>
    /// Protects a request with the next Sender Sequence Number (RFC 8613 section 8.1): Partial IV and kid (and 'kid
    /// context' when the context sends it) in the OSCORE option; the nonce of the Sender ID and Partial IV.
    /// </summary>
    public static CoapMessage ProtectRequest(OscoreContext context, CoapMessage request, out RequestBinding binding)
    {
        long sequenceNumber = context.NextSequenceNumber();
        Span<byte> piv = stackalloc byte[5];
        piv = piv[..OscoreAlgorithm.PartialIv(sequenceNumber, piv)];
        ReadOnlySpan<byte> kid = context.SenderId.Span;
        Span<byte> nonce = stackalloc byte[OscoreAlgorithm.NonceLength];
        OscoreAlgorithm.Nonce(context.CommonIv, kid, piv, nonce);
        Span<byte> aad = stackalloc byte[OscoreAlgorithm.MaxAadLength];
        aad = aad[..OscoreAlgorithm.Aad(aad, kid, piv)];
        byte[] idContext = context.IdContext ?? [];
        Span<byte> option = stackalloc byte[OscoreOptionValue.MaxLength(idContext.Length)];
        option = option[..OscoreOptionValue.Write(option, piv, idContext, context.SendsIdContext, kid, hasKid: true)];

        bool observe = request.HasOption(CoapOptionNumber.Observe);
        binding = new RequestBinding(context, context.SenderId, piv.ToArray(), observe);

        // RFC 8613 section 4.1.3.3: a Proxy-Uri is decomposed; its path and query are Class E, the rest stays outer.
        CoapMessage source = request;
        string? proxyUri = null;
        if (request.TryGetOption(CoapOptionNumber.ProxyUri, out CoapOptionEntry proxy))
        {
            source = Decompose(request, proxy.GetString(), out proxyUri);
        }

        CoapMessage outer = Seal(context, source, isRequest: true, nonce, aad, option, observe ? CoapCode.Fetch : CoapCode.Post);
        if (proxyUri is not null)
        {
            outer.Options.Add(CoapOptionNumber.ProxyUri, proxyUri);
        }

        return outer;
    }

    /// <summary>
    /// Protects a response (RFC 8613 section 8.3): without a Partial IV of its own it reuses the request's nonce; with
    /// one (a notification, section 4.1.3.5.2) it takes the next Sender Sequence Number and its own nonce.
    /// </summary>
    public static CoapMessage ProtectResponse(RequestBinding binding, CoapMessage response, bool withPartialIv)
    {
        OscoreContext context = binding.Context;
        Span<byte> nonce = stackalloc byte[OscoreAlgorithm.NonceLength];
        Span<byte> option = stackalloc byte[8];
        if (withPartialIv)
        {
            Span<byte> piv = stackalloc byte[5];
            piv = piv[..OscoreAlgorithm.PartialIv(context.NextSequenceNumber(), piv)];
            OscoreAlgorithm.Nonce(context.CommonIv, context.SenderId.Span, piv, nonce);
            option = option[..OscoreOptionValue.Write(option, piv, [], false, [], false)];
        }
        else
        {
            OscoreAlgorithm.Nonce(context.CommonIv, binding.RequestKid.Span, binding.RequestPiv, nonce);
            option = [];
        }

        Span<byte> aad = stackalloc byte[OscoreAlgorithm.MaxAadLength];
        aad = aad[..OscoreAlgorithm.Aad(aad, binding.RequestKid.Span, binding.RequestPiv)];
        return Seal(context, response, isRequest: false, nonce, aad, option, response.HasOption(CoapOptionNumber.Observe) ? CoapCode.Content : CoapCode.Changed);
    }

    /// <summary>
    /// Decrypts a request whose context the caller found (RFC 8613 section 8.2, steps 4-6); null when it fails to
    /// verify. The outer Class U options join the decrypted ones.
    /// </summary>
    public static CoapMessage? OpenRequest(OscoreContext context, CoapMessage outer, ReadOnlySpan<byte> kid, ReadOnlySpan<byte> piv)
    {
        Span<byte> nonce = stackalloc byte[OscoreAlgorithm.NonceLength];
        OscoreAlgorithm.Nonce(context.CommonIv, kid, piv, nonce);
        Span<byte> aad = stackalloc byte[OscoreAlgorithm.MaxAadLength];
        aad = aad[..OscoreAlgorithm.Aad(aad, kid, piv)];
        if (Open(context.Opener, nonce, aad, outer.Payload) is not { Code.IsRequest: true } inner)
        {
            return null;
        }

        foreach (CoapOptionEntry option in outer.Options)
        {
            if (option.Number is CoapOptionNumber.UriHost or CoapOptionNumber.UriPort or CoapOptionNumber.ProxyScheme or CoapOptionNumber.ProxyUri)
            {
                inner.Options.Add(option);
            }
        }

        return inner;
    }

    /// <summary>
    /// Decrypts a response to the request of <paramref name="binding"/> (RFC 8613 section 8.4): with the Partial IV of the
    /// response, when it has one, and the other endpoint's ID, or with the request's nonce; null when it fails to verify.
    /// </summary>
    public static CoapMessage? OpenResponse(RequestBinding binding, CoapMessage outer, in OscoreOptionValue value)
    {
        OscoreContext context = binding.Context;
        Span<byte> nonce = stackalloc byte[OscoreAlgorithm.NonceLength];
        if (value.PartialIv.IsEmpty)
        {
            OscoreAlgorithm.Nonce(context.CommonIv, binding.RequestKid.Span, binding.RequestPiv, nonce);
        }
        else
        {
            ReadOnlySpan<byte> kid = value.Kid is { } sent ? sent.Span : context.RecipientId.Span;
            OscoreAlgorithm.Nonce(context.CommonIv, kid, value.PartialIv.Span, nonce);
        }

        Span<byte> aad = stackalloc byte[OscoreAlgorithm.MaxAadLength];
        aad = aad[..OscoreAlgorithm.Aad(aad, binding.RequestKid.Span, binding.RequestPiv)];
        return Open(context.Opener, nonce, aad, outer.Payload) is { Code.IsResponse: true } inner ? inner : null;
    }

    /// <summary>
    /// The OSCORE message of <paramref name="source"/>: its Type, Message ID and token, <paramref name="outerCode"/>, the
    /// outer options (Class U, Observe, the OSCORE option) and the ciphertext of the plaintext (section 5.3: the Code, the
    /// Class E options, and the payload after 0xFF).
    /// </summary>
    private static CoapMessage Seal(OscoreContext context, CoapMessage source, bool isRequest, ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> aad, ReadOnlySpan<byte> optionValue, CoapCode outerCode)
    {
        CoapMessage plain = new() { Type = CoapMessageType.Confirmable, Code = source.Code, Payload = source.Payload };
        CoapMessage outer = new() { Type = source.Type, MessageId = source.MessageId, Token = source.Token, Code = outerCode };
        foreach (CoapOptionEntry option in source.Options)
        {
            switch (option.Number)
            {
                case CoapOptionNumber.UriHost or CoapOptionNumber.UriPort or CoapOptionNumber.ProxyScheme:
                    // Class U: a proxy needs them (section 4.1.3.2).
                    outer.Options.Add(option);
                    break;
                case CoapOptionNumber.Oscore or CoapOptionNumber.ProxyUri:
                    // A message is protected once; Proxy-Uri was decomposed by the caller.
                    break;
                case CoapOptionNumber.Observe:
                    // Inner and outer (section 4.1.3.5): a request's value both ways; a notification's inner one empty.
                    outer.Options.Add(option);
                    if (isRequest)
                    {
                        plain.Options.Add(option);
                    }
                    else
                    {
                        plain.Options.AddEmpty(CoapOptionNumber.Observe);
                    }

                    break;
                default:
                    // Class E, and every option OSCORE does not know (section 4.1).
                    plain.Options.Add(option);
                    break;
            }
        }

        outer.Options.Add(CoapOptionNumber.Oscore, optionValue.ToArray());

        // The serializer writes a 4-byte header (version and type, Code, Message ID) before the options: the Code goes in
        // the header's last byte, so the plaintext is one span from there, in a pooled buffer.
        int length = CoapMessageSerializer.Udp.GetSerializedLength(plain);
        byte[] rented = ArrayPool<byte>.Shared.Rent(length);
        byte[] ciphertext;
        try
        {
            CoapMessageSerializer.Udp.Serialize(plain, rented);
            rented[3] = source.Code.Value;
            ReadOnlySpan<byte> plaintext = rented.AsSpan(3, length - 3);
            ciphertext = new byte[plaintext.Length + OscoreAlgorithm.TagLength];
            lock (context.Sealer)
            {
                context.Sealer.Encrypt(nonce, plaintext, ciphertext.AsSpan(0, plaintext.Length), ciphertext.AsSpan(plaintext.Length), aad);
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented, clearArray: true);
        }

        outer.Payload = ciphertext;
        return outer;
    }

    /// <summary>The decrypted message of a ciphertext (its Code, options and payload), or null when it does not verify or parse.</summary>
    private static CoapMessage? Open(AesCcm opener, ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> aad, ReadOnlyMemory<byte> ciphertext)
    {
        if (ciphertext.Length < OscoreAlgorithm.TagLength + 1)
        {
            return null;
        }

        // Decrypted after a 3-byte gap, then made a header (version 1, CON, no token; the Code; Message ID 0) so the
        // serializer parses and checks the options.
        int plaintextLength = ciphertext.Length - OscoreAlgorithm.TagLength;
        byte[] buffer = new byte[3 + plaintextLength];
        ReadOnlySpan<byte> sealedBytes = ciphertext.Span;
        try
        {
            lock (opener)
            {
                opener.Decrypt(nonce, sealedBytes[..plaintextLength], sealedBytes[plaintextLength..], buffer.AsSpan(3), aad);
            }
        }
        catch (CryptographicException)
        {
            return null;
        }

        buffer[0] = 0x40;
        buffer[1] = buffer[3];
        buffer[2] = 0;
        buffer[3] = 0;
        return CoapMessageSerializer.Udp.TryDeserialize(buffer.AsMemory(), out CoapMessage? message, out _) ? message : null;
    }

    /// <summary>A copy of <paramref name="request"/> with its Proxy-Uri replaced by Uri-Path and Uri-Query, and the outer Proxy-Uri of its scheme and authority (RFC 8613 section 4.1.3.3).</summary>
    private static CoapMessage Decompose(CoapMessage request, string proxyUri, out string outerProxyUri)
    {
        if (!Uri.TryCreate(proxyUri, UriKind.Absolute, out Uri? uri))
        {
            throw new ArgumentException($"The Proxy-Uri '{proxyUri}' is not an absolute URI (RFC 7252 section 5.10.2).", nameof(request));
        }

        outerProxyUri = uri.Scheme + "://" + uri.Authority;
        CoapMessage copy = new() { Type = request.Type, MessageId = request.MessageId, Token = request.Token, Code = request.Code, Payload = request.Payload };
        foreach (CoapOptionEntry option in request.Options)
        {
            if (option.Number != CoapOptionNumber.ProxyUri)
            {
                copy.Options.Add(option);
            }
        }

        foreach (string segment in uri.AbsolutePath.Split('/', StringSplitOptions.RemoveEmptyEntries))
        {
            copy.Options.Add(CoapOptionNumber.UriPath, Uri.UnescapeDataString(segment));
        }

        if (uri.Query.Length > 1)
        {
            foreach (string argument in uri.Query[1..].Split('&'))
            {
                copy.Options.Add(CoapOptionNumber.UriQuery, Uri.UnescapeDataString(argument));
            }
        }

        return copy;
    }
}
