using System.Linq;
using Microsoft.CodeAnalysis;

namespace CoapNet.Generators;

/// <summary>Names and tests of symbols, as the generated code spells them.</summary>
internal static class Symbols
{
    public static readonly SymbolDisplayFormat Plain = SymbolDisplayFormat.FullyQualifiedFormat;

    public static readonly SymbolDisplayFormat Annotated = SymbolDisplayFormat.FullyQualifiedFormat
        .AddMiscellaneousOptions(SymbolDisplayMiscellaneousOptions.IncludeNullableReferenceTypeModifier);

    /// <summary>"System.Threading.Tasks.Task`1" for Task&lt;T&gt;: the metadata name with its namespace.</summary>
    public static string MetadataName(ITypeSymbol type)
    {
        ISymbol definition = type.OriginalDefinition;
        string name = definition.MetadataName;
        for (ISymbol? container = definition.ContainingType; container is not null; container = container.ContainingType)
        {
            name = container.MetadataName + "+" + name;
        }

        INamespaceSymbol? ns = definition.ContainingType?.ContainingNamespace ?? definition.ContainingNamespace;
        ISymbol top = definition;
        while (top.ContainingType is not null)
        {
            top = top.ContainingType;
        }

        ns = top.ContainingNamespace;
        return ns is null || ns.IsGlobalNamespace ? name : ns.ToDisplayString() + "." + name;
    }

    public static bool Is(ITypeSymbol type, string metadataName) => MetadataName(type) == metadataName;

    /// <summary>True when the type implements ISpanParsable of itself (int, long, Guid, bool, double, DateTime, ...).</summary>
    public static bool IsSpanParsable(ITypeSymbol type)
        => type.AllInterfaces.Any(i => Is(i, "System.ISpanParsable`1") && SymbolEqualityComparer.Default.Equals(i.TypeArguments[0], type));

    /// <summary>The type inside Nullable&lt;T&gt;, or null.</summary>
    public static ITypeSymbol? NullableValue(ITypeSymbol type)
        => type is INamedTypeSymbol { OriginalDefinition.SpecialType: SpecialType.System_Nullable_T } named ? named.TypeArguments[0] : null;

    /// <summary>Why generated code in another file of the assembly cannot name the type, or null when it can.</summary>
    public static string? Inaccessible(ITypeSymbol type)
    {
        switch (type)
        {
            case ITypeParameterSymbol parameter:
                return $"it is of the type parameter {parameter.Name}";
            case IArrayTypeSymbol array:
                return Inaccessible(array.ElementType);
            case IPointerTypeSymbol or IFunctionPointerTypeSymbol:
                return "it is a pointer";
            case INamedTypeSymbol named:
                if (named.IsAnonymousType)
                {
                    return "it is of an anonymous type";
                }

                if (named.IsFileLocal)
                {
                    return $"{named.Name} is a file-local type";
                }

                for (INamedTypeSymbol? t = named; t is not null; t = t.ContainingType)
                {
                    if (t.DeclaredAccessibility is Accessibility.Private or Accessibility.Protected or Accessibility.ProtectedAndInternal)
                    {
                        return $"{t.Name} is {t.DeclaredAccessibility.ToString().ToLowerInvariant()}, so generated code cannot name it";
                    }
                }

                foreach (ITypeSymbol argument in named.TypeArguments)
                {
                    if (Inaccessible(argument) is string reason)
                    {
                        return reason;
                    }
                }

                return null;
            default:
                return null;
        }
    }

    /// <summary>The attribute of a parameter or property whose class has this simple name (ours, or ASP.NET Core's of the same name).</summary>
    public static AttributeData? Attribute(ISymbol symbol, string name)
        => symbol.GetAttributes().FirstOrDefault(a => a.AttributeClass?.Name == name);

    /// <summary>The value of a named string argument of an attribute ("Name").</summary>
    public static string? NamedString(AttributeData? attribute, string name)
    {
        if (attribute is null)
        {
            return null;
        }

        foreach (var argument in attribute.NamedArguments)
        {
            if (argument.Key == name && argument.Value.Value is string value && value.Length > 0)
            {
                return value;
            }
        }

        return null;
    }

    /// <summary>C# text for a string constant.</summary>
    public static string Literal(string value) => Microsoft.CodeAnalysis.CSharp.SymbolDisplay.FormatLiteral(value, quote: true);
}
