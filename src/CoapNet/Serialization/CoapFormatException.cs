namespace CoapNet.Serialization;

/// <summary>Thrown when bytes are not a well-formed CoAP message; carries the reason and the byte offset.</summary>
public sealed class CoapFormatException : FormatException
{
    /// <summary>Creates the exception for <paramref name="error"/>.</summary>
    /// <param name="error">The format error.</param>
    public CoapFormatException(CoapFormatError error)
        : base("Malformed CoAP message: " + error.ToString()) => Error = error;

    /// <summary>The format error.</summary>
    public CoapFormatError Error { get; }

    /// <summary>The reason.</summary>
    public CoapFormatErrorReason Reason => Error.Reason;

    /// <summary>The byte offset, from the start of the message, where the problem was found.</summary>
    public long Offset => Error.Offset;
}
