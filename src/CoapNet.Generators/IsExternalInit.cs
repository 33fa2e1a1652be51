namespace System.Runtime.CompilerServices;

/// <summary>What records' init accessors need; netstandard2.0 lacks it.</summary>
internal static class IsExternalInit
{
}
