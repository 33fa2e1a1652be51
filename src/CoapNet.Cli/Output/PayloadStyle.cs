namespace CoapNet.Cli.Output;

/// <summary>How a payload goes to standard output.</summary>
internal enum PayloadStyle
{
    /// <summary>The bytes exactly as they came: for a file, a pipe, or --raw.</summary>
    Raw,

    /// <summary>For a reader: CBOR in diagnostic notation, JSON indented, text as text, other binary as a hex dump.</summary>
    Pretty,
}
