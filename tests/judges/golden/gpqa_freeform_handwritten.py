"""Hand-written long free-form GPQA responses for the corpus, each with the letter a careful reader finds.

Written for this project in the styles reasoning models use when not held to "Answer: X": long
derivations that name other letters first, restated options, answers first and explained after,
revisions, hedges, answers in words only, several languages. "set" names the option set in
gpqa_freeform_sets.py (its options are A-D in the order listed there); expected is the committed
letter, None (no committed answer) or "ambiguous" (a letter quoting another option's text).
"""

HANDWRITTEN = [
    dict(id="enal-long-derivation", set="enal", expected="A", response=r"""
Let's work through the sequence step by step.

**Step 1.** 4-hydroxybenzaldehyde is deprotonated at the phenol under the basic conditions, but the aldehyde
can still act as the electrophile. Acetaldehyde enolate attacks it to give the β-hydroxy aldehyde.

**Step 2.** Heating drives dehydration to the α,β-unsaturated aldehyde. A second equivalent of the aryl
aldehyde then condenses at the α-position.

Now compare with the options. Option B, 3-hydroxy-2,4-bis(4-hydroxyphenyl)butanal, is the aldol adduct
before dehydration; under heating it will not survive. Option C has lost one aryl group entirely, and D has
lost the hydroxyl groups, which nothing in the conditions could remove.

The final product is **2,4-bis(4-hydroxyphenyl)but-2-enal (Option A)**.
"""),
    dict(id="enal-answer-first", set="enal", expected="C", response=r"""
**C. 4-(4-hydroxyphenyl)but-3-enal**

Why: only one equivalent of the aryl aldehyde is present (the problem says 1.0 equiv), so the double
aldol that would give A or B cannot happen. D would require a deoxygenation step that is absent.
"""),
    dict(id="enal-hedge", set="enal", expected=None, response=r"""
The conditions are ambiguous about whether the second condensation occurs. If it does, we get
2,4-bis(4-hydroxyphenyl)but-2-enal; if not, 4-(4-hydroxyphenyl)but-3-enal.

So the product is **A. 2,4-bis(4-hydroxyphenyl)but-2-enal** or **C. 4-(4-hydroxyphenyl)but-3-enal**, depending on stoichiometry.
"""),
    dict(id="enal-text-only", set="enal", expected="B", response=r"""
Without heating, the dehydration step does not occur; the reaction is run at 0 °C and quenched cold.
Two aldol additions take place but both hydroxyls are retained... actually only the first hydroxyl stays,
the second addition happens at the α-carbon.

The final product is 3-hydroxy-2,4-bis(4-hydroxyphenyl)butanal.
"""),
    dict(id="peaks-revision", set="peaks", expected="B", response=r"""
The product is 1,4-dimethoxybenzene after the two methylations.

Counting signals: the aromatic protons are all equivalent by symmetry, and the two OCH3 groups are equivalent.
So the correct answer is: A. 2 peaks

However, the question asks about the intermediate after the first step only, which is 4-methoxyphenol. That
one has two different aromatic environments (an AA'BB' pattern), the OCH3 and the OH.

The closest correct answer is:

B. 4
"""),
    dict(id="peaks-count-words", set="peaks", expected="C", response=r"""
Let me count the distinct environments in the dibrominated product.

- aromatic H ortho to Br: 1 environment
- aromatic H meta: 1 environment
- CH2 next to the ring: 1
- CH2 in the middle of the chain: 2 (diastereotopic)
- CH3: 1
- OH: 1
- NH: 1

That gives 8 signals in total, so the answer is (C).
"""),
    dict(id="peaks-bare-number", set="peaks", expected="D", response=r"""
Each of the 12 protons in the cyclic product is unique because the molecule has no symmetry element
(it is chiral with four stereocentres). So there are 12 distinct 1H signals.

**Answer: D**
"""),
    dict(id="peaks-words-ambiguous", set="peaks_words", expected="ambiguous", response=r"""
Both methyl groups are equivalent by the C2 axis, the two aromatic protons are equivalent, and the
OH and CH are distinct. That makes four environments.

The correct answer is **C. 4 peaks**
"""),
    dict(id="peaks-words-text", set="peaks_words", expected="B", response=r"""
The symmetric dimer has three kinds of hydrogen: aromatic, benzylic, methyl.

**Answer:** 3 peaks
"""),
    dict(id="energy-closest", set="energy", expected="B", response=r"""
The process is γγ → e⁺e⁻ on the CMB. The threshold condition is E_γ ε (1 − cos θ) ≥ 2 m_e² c⁴. For a head-on
collision (cos θ = −1) this gives E_γ = m_e² c⁴ / ε.

With m_e c² = 0.511 MeV and ε = 10⁻³ eV:

E_γ = (0.511 × 10⁶ eV)² / (10⁻³ eV) = 2.61 × 10¹¹ eV · 10³ = 2.6 × 10¹⁴ eV ≈ 2.6 × 10⁵ GeV.

Hmm, but the problem gives the average CMB photon energy as 10⁻³ eV, and the threshold is often quoted with
the factor of 1.5 from averaging over angles. Taking that into account, E ≈ 3.9 × 10⁵ GeV.

The closest answer to our calculated value is **B. 3.9 x 10^5 GeV**
"""),
    dict(id="energy-latex-final", set="energy", expected="A", response=r"""
Using the head-on threshold,

$$E_\gamma = \frac{m_e^2c^4}{E_{\rm CMB}} = \frac{(0.511\ {\rm MeV})^2}{10^{-3}\ {\rm eV}} \approx 2.6\times10^{5}\ {\rm GeV}.$$

Options C ($1.8\times 10^5$ GeV) and D ($9.5\times10^4$ GeV) are too low; B would include an angular factor
that the question explicitly excludes.

**Final answer: A**
"""),
    dict(id="energy-text-only-latex", set="energy", expected="A", response=r"""
The head-on threshold gives

$$E_\gamma = \frac{m_e^2c^4}{\epsilon} \approx 2.6 \times 10^{5}\ \text{GeV}.$$

Therefore the answer is $2.6 \times 10^{5}$ GeV.
"""),
    dict(id="immuno-answer-first", set="immuno", expected="D", response=r"""
The process taking place is:

D. somatic hypermutation

Somatic hypermutation is the process by which B cells in the germinal centre introduce point mutations into
the variable regions of their immunoglobulin genes, which is exactly what the sequencing of the variable heavy
chain shows here. Class switching (A) changes the constant region, not the variable region. VDJ recombination (B)
happens earlier, in the bone marrow, before antigen exposure. Complement activation (C) is not a B-cell genetic
process at all.
"""),
    dict(id="immuno-think-then-text", set="immuno", expected="D", response=r"""
<think>
The mice were given the antigen orally; Peyer's patches are where the proliferating cells are found. The variable
heavy chain gene shows high variability. Is this VDJ recombination? No, that happens before antigen. Class
switching? That changes the constant region. So it is somatic hypermutation. The answer is D.
Wait, let me re-read: "high variability in the variable heavy chain gene" - yes, SHM.
</think>

The high variability in the variable heavy chain of proliferating B cells after antigen exposure is the hallmark
of **somatic hypermutation**.
"""),
    dict(id="immuno-restates-then-commits", set="immuno", expected="A", response=r"""
Let me recall what each option means:

A) class switching recombination - replaces the constant region (IgM to IgA/IgG) while keeping the variable region.
B) VDJ recombination - assembles the variable region during early B-cell development.
C) complement activation - a cascade of plasma proteins, not a B-cell process.
D) somatic hypermutation - point mutations in the variable region after antigen exposure.

The experiment measures a switch from IgM to IgA in the gut-associated lymphoid tissue, with the variable region
unchanged. That is class switching.

The correct answer is A.
"""),
    dict(id="immuno-both", set="immuno", expected=None, response=r"""
In germinal centres both processes occur at the same time, and the data given (increased affinity plus IgA
production) show the footprints of both.

Both A and D are consistent with the observations, and the question does not let us separate them.
"""),
    dict(id="stereo-leadin-bold", set="stereo", expected="A", response=r"""
Hydroboration-oxidation adds H and OH syn, anti-Markovnikov. Starting from 1-methylcyclohexene, boron adds to C2
(the less substituted carbon of the alkene) from the less hindered face, and the methyl ends up trans to the OH.

Assigning CIP priorities at C1: OH > C2 > C6 > H. At C2: C1 > C3 > CH3 > H.

For the enantiomer drawn with OH up (wedge) and CH3 down (dash) we get C1 = R, C2 = S.

So the correct product is:

**A. (1R,2S)-2-methylcyclohexan-1-ol**

(Its enantiomer (1S,2R), option D, forms in equal amount, but only A is drawn with the specified starting
enantiomer.)
"""),
    dict(id="stereo-hedge-bold", set="stereo", expected=None, response=r"""
Since the starting material is racemic, hydroboration gives both enantiomers of the trans product in equal
amounts. The product is therefore

**A. (1R,2S)-2-methylcyclohexan-1-ol** or **D. (1S,2R)-2-methylcyclohexan-1-ol**

as a racemic mixture.
"""),
    dict(id="stereo-ambiguous", set="stereo", expected="ambiguous", response=r"""
The OH and CH3 end up trans; assigning priorities gives S at C1 and R at C2.

Answer: **B. (1S,2R)-2-methylcyclohexan-1-ol**
"""),
    dict(id="stereo-text-only", set="stereo", expected="C", response=r"""
Syn addition from the top face, then retention at C1 on oxidation: the configuration is (1R,2R).

**Final answer: (1R,2R)-2-methylcyclohexan-1-ol**
"""),
    dict(id="reagents-likely", set="reagents", expected="C", response=r"""
The first step is an acid-catalysed enamine formation; the classical catalyst for this is p-toluenesulfonic
acid, so A = TsOH rather than aqueous acid, which would hydrolyse the enamine back. The second step reduces
the iminium to the amine, which needs a hydride source, so B = NaBH4; hydrogen peroxide would oxidise instead.

Looking at the choices, the correct answer is likely C: A = TsOH, B = NaBH4
"""),
    dict(id="reagents-text-only", set="reagents", expected="B", response=r"""
Aqueous acid is needed to hydrolyse the ketal in the first step, and the ketone is then reduced.

So the reagents are A = H3O+, B = NaBH4.
"""),
    dict(id="reagents-letter-before", set="reagents", expected="D", response=r"""
Step one is hydrolysis, step two an oxidation (Baeyer-Villiger-type with peroxide).

D is the correct answer.
"""),
    dict(id="mass-boxed-text", set="mass", expected="A", response=r"""
The invariant mass is the norm of the total four-momentum:

$$M^2 = \left(\sum p^\mu\right)^2 = (E_1 + E_2)^2 - |\vec p_1 + \vec p_2|^2.$$

Options B and C only hold in special frames (B for massless particles is wrong altogether, C only when both
are at rest). D is the massless head-on limit.

$$\boxed{A. \ M^2 = (E_1+E_2)^2 - (p_1+p_2)^2}$$
"""),
    dict(id="mass-boxed-letter-only", set="mass", expected="C", response=r"""
In the rest frame of both particles, E_i = m_i and p_i = 0, so $M^2 = (m_1+m_2)^2$.

$\boxed{C}$
"""),
    dict(id="substring-chloroform", set="substring", expected="C", response=r"""
The polymer is polar (it carries ester side chains), so a non-polar aromatic solvent like toluene will not
dissolve it at room temperature; chloroform, being moderately polar and a good hydrogen-bond donor, does.

Answer: chloroform
"""),
    dict(id="substring-both", set="substring", expected="B", response=r"""
Both solvents dissolve polystyrene readily at room temperature.

**Answer:** toluene and chloroform
"""),
    dict(id="substring-toluene", set="substring", expected="A", response=r"""
Only the aromatic solvent can swell the crystalline domains, so the final answer is toluene.
"""),
    dict(id="substring-neither", set="substring", expected="D", response=r"""
The polymer is highly crystalline polyethylene; at room temperature it dissolves in neither solvent
(only in hot xylene or decalin).

The answer is: neither toluene nor chloroform.
"""),
    dict(id="spin-latex", set="spin", expected="A", response=r"""
The spin state is $|\chi\rangle = (3i, 4)$. Normalising: $\langle\chi|\chi\rangle = 9 + 16 = 25$.

$\langle S_y\rangle = \frac{\hbar}{2}\frac{1}{25}\begin{pmatrix}-3i & 4\end{pmatrix}\begin{pmatrix}0 & -i\\ i & 0\end{pmatrix}\begin{pmatrix}3i\\4\end{pmatrix}$

$\sigma_y \chi = (-4i, -3)$, and $\chi^\dagger \sigma_y \chi = (-3i)(-4i) + 4(-3) = -12 - 12 = -24$.

So $\langle S_y\rangle = \frac{\hbar}{2}\cdot\frac{-24}{25} = -\frac{12\hbar}{25}$.

The answer is (A) $-12\hbar/25$.
"""),
    dict(id="spin-sign-revision", set="spin", expected="B", response=r"""
$\chi^\dagger\sigma_y\chi$ ... I get $-24$, so $\langle S_y\rangle = -12\hbar/25$, which is option A.

Hmm, wait. The state is written as $(3i, 4)$ and its conjugate transpose is $(-3i, 4)$. Redo: $\sigma_y\chi = (-i\cdot 4, i\cdot 3i) = (-4i, -3)$.
$(-3i)(-4i) = 12 i^2 = -12$, and $4 \cdot (-3) = -12$. Total $-24$. Hmm, that's the same.

Actually, the question uses the convention where the state is $(3i, 4)$ in the basis $(|-\rangle, |+\rangle)$, which flips the sign.

So the expectation value is $+12\hbar/25$, option B.
"""),
    dict(id="orbit-tilde", set="orbit", expected="B", response=r"""
From the radial velocity amplitudes, K ∝ P^(-1/3) for equal planet masses and circular orbits, so
P2/P1 = (K1/K2)^3 = (7/5)^3 = 2.744... hmm, that's not among the options.

Let me redo with the wavelength shifts: Δλ1 = 5 mÅ, Δλ2 = 7 mÅ, so K2/K1 = 7/5 = 1.4 and
P2/P1 = (K1/K2)^3 = (5/7)^3 = 0.364. That is option D, but the question asks how many times longer the period
of planet 2 is... (5/7)^3 < 1 means shorter.

Re-reading: planet 2's shift is 5 mÅ, planet 1's is 7 mÅ. Then P2/P1 = (7/5)^3... no wait, K ∝ P^(-1/3), so
P2/P1 = (K1/K2)^3 = (7/5)^3 = 2.74. Still not an option. With K ∝ P^(-1/3) and the square in the energy...

Using K ∝ P^(-1/2) (the convention in this problem set): P2/P1 = (7/5)^2 = 1.96.

**~1.96 (B)**
"""),
    dict(id="orbit-think-only", set="orbit", expected=None, finish_reason="length", response=r"""
<think>
K ∝ P^(-1/3). Ratio of shifts 7/5. So P2/P1 = (7/5)^3 = 2.74? Not in the options. Maybe the answer is B (~1.96)
if they use the square. Or D if I have the planets swapped. Let me recompute with the masses included: M sin i is
the same for both, so
"""),
    dict(id="genetics-text-only", set="genetics", expected="D", response=r"""
A dominant-negative mutation in the dimerization domain means the mutant subunit still binds the wild-type
partner but the complex cannot function. Here the mutation is in the dimerization domain of a transcription
factor: the mutant subunits dimerize with wild-type subunits and the complexes are sent to aggregates.

Therefore, the molecular phenotype most likely observed is protein aggregation and loss-of-function phenotype.
"""),
    dict(id="genetics-option-phrase", set="genetics", expected="B", response=r"""
Mutation Y acts as a dominant-negative: it still dimerizes, so it pulls wild-type protein into non-functional
dimers, which are then recognised and degraded by the proteasome. That removes wild-type function too.

This corresponds to option B.
"""),
    dict(id="genetics-restated-no-commit", set="genetics", expected=None, response=r"""
Let us consider each option:

A) loss of protein dimerization and wild-type phenotype - would not be dominant.
B) protein degradation and loss-of-function of the wild-type allele - possible.
C) change of protein conformation and gain-of-function phenotype - unlikely for a dimerization mutant.
D) protein aggregation and loss-of-function phenotype - also possible.

Without more information on the fate of the heterodimers, B and D cannot be distinguished.
"""),
    dict(id="astro-long-markdown", set="astro", expected="B", response=r"""
### Detectability

ESPRESSO (Paranal) can observe stars brighter than V = 17; HIRES (Keck) stars brighter than V = 16. Paranal
sees declinations below about +30°, Keck above about −65°.

| Star | V (apparent) | DEC | ESPRESSO | HIRES |
|------|------|------|------|------|
| 1 | 15.5 | −75° | yes | no |
| 2 | 16.5 | +55° | no | no |
| 3 | 15.5 (after extinction) | +48° | no | yes |
| 3 | recalculated: 15.9 | +48° → −48° (typo in my notes) | yes | yes |
| 4 | 16.0 | −48° | yes | yes? |
| 5 | 16.5 | +60° | no | no |

Hmm, star 4's absolute magnitude 15.5 at 10 pc gives V = 15.5 + extinction 0.46·... = 16.9, too faint for HIRES.
Star 5: M_V = 16.5 at 5 pc → V = 14.99, fine for both; DEC +60° is visible from Paranal at low altitude only but
within the stated limit of the question.

So the stars detectable by both are Star 3 and Star 5.

**Answer: B**
"""),
    dict(id="astro-text-in-bold", set="astro", expected="C", response=r"""
Stars 4 and 5 are the only ones bright enough for HIRES that are also within Paranal's declination limit.

Therefore the correct choice is **Star 4 and Star 5**.
"""),
    dict(id="ph-two-values", set="ph", expected="C", response=r"""
At 25% titration: [A⁻]/[HA] = 1/3, pH = pKa + log(1/3) = 4.74 − 0.48 = 4.26.

At the equivalence point: [A⁻] = 0.02 M diluted to 0.01... wait, the volume doubles. [A⁻] = 0.005 M.
Kb = 1e-14 / 1.85e-5 = 5.4e-10. [OH⁻] = sqrt(5.4e-10 × 0.005) = 1.64e-6, pOH = 5.78, pH = 8.22.

Hmm, that's 8.22, but the options give 8.52 with 4.26. Let me recheck the dilution: 20 cm³ of 0.05 M acid
+ 20 cm³ water = 0.025 M; titrated with 0.1 M NaOH, equivalence at 10 cm³, total 50 cm³, [A⁻] = 0.02 M.
[OH⁻] = sqrt(5.4e-10 × 0.02) = 3.3e-6, pOH = 5.48, pH = 8.52. ✓

So the answer is 4.26; 8.52, which is option C.
"""),
    dict(id="ph-fr-nbsp", set="ph", expected="C", response="""
À 25\u00a0% du titrage, pH = pKa + log(1/3) = 4,26. Au point d'équivalence, [A⁻] = 0,02\u00a0M et pH = 8,52.

La bonne réponse est donc\u00a0: **C**
"""),
    dict(id="ph-zh", set="ph", expected="A", response="""
25%滴定时，pH = pKa + lg(1/3)……计算得 4.57；等当点时 pH = 6.92。

选项B和D都不对，C的第二个数值偏高。

答案：A
"""),
    dict(id="ph-zh-fullwidth-paren", set="ph", expected="D", response="""
半中和点 pH = pKa = 4.73，等当点为中性 7.00（强酸强碱体系）。

综上，正确答案为（Ｄ）。
"""),
    dict(id="ph-de", set="ph", expected="B", response="""
Bei 25 % Titration gilt pH = pKa + log(1/3). Mit pKa = 3,65 ergibt sich 3,17; am Äquivalenzpunkt pH = 6,73.

Option A passt nicht zum pKa, C und D auch nicht.

Die richtige Antwort ist also B.
"""),
    dict(id="ph-es", set="ph", expected="D", response="""
Al 25 % de la valoración el pH vale pKa + log(1/3); en el punto de equivalencia la solución es neutra.

Por lo tanto, la respuesta correcta es la opción D: 4.73; 7.00.
"""),
    dict(id="immuno-fr-guillemets", set="immuno", expected="D", response="""
Les cellules B prolifèrent dans les plaques de Peyer après l'exposition à l'antigène, et la région variable des
chaînes lourdes présente une forte variabilité : c'est l'hypermutation somatique.

Réponse\u00a0: «\u00a0D\u00a0»
"""),
    dict(id="immuno-ja", set="immuno", expected="D", response="""
抗原曝露後にパイエル板で増殖するB細胞の可変領域に高い多様性が見られることから、体細胞超変異と考えられる。

答え：D
"""),
    dict(id="peaks-quoted-instruction", set="peaks", expected="B", response=r"""
The instructions say to end with "Answer: X" where X is the letter. Fine.

The product has two pairs of equivalent aromatic protons plus the methyl and the NH: 4 signals.

Answer: B
"""),
    dict(id="peaks-abandoned-answer", set="peaks", expected="C", response=r"""
Counting quickly I'd say the answer is B (4 peaks), but that ignores the diastereotopic CH2 protons and the
two rotamers observed at room temperature. Each environment splits in two, so 8 signals.

Final answer: C
"""),
    dict(id="peaks-no-commit-truncated", set="peaks", expected=None, finish_reason="length", response=r"""
The product after three steps: first the Grignard adds to the ester twice, giving a tertiary alcohol; then
dehydration... Let me count the hydrogens. If the alkene is tetrasubstituted, the answer would be 2 (option A),
but if it is trisubstituted we get more. Let me consider the regiochemistry more carefully. Zaitsev would give
"""),
    dict(id="energy-option-text-ambiguous-letter", set="energy", expected="ambiguous", response=r"""
E = m_e²c⁴/ε = 2.6 × 10⁵ GeV.

So the answer is D. 2.6 x 10^5 GeV
"""),
    dict(id="mass-hedge-paren", set="mass", expected=None, response=r"""
In the centre-of-momentum frame p1 + p2 = 0, so A reduces to (E1+E2)². For particles at rest that is (m1+m2)².

Answer: A (or C, as they are the same in the rest frame).
"""),
    dict(id="orbit-either", set="orbit", expected=None, response=r"""
Depending on whether the K ∝ P^(-1/3) or P^(-1/2) scaling is intended, the ratio is either ~1.96 or ~1.40.

The answer is either A or B.
"""),
    dict(id="genetics-cant-decide", set="genetics", expected=None, response=r"""
The information in the question is not sufficient to decide between degradation and aggregation of the
heterodimers. I would need data on protein levels to answer this question.
"""),
    dict(id="reagents-matches-later", set="reagents", expected="A", response=r"""
First, I considered aqueous acid for step A, but water would hydrolyse the enamine. So A must be TsOH.
For step B the oxidant is hydrogen peroxide, which converts the sulfide to the sulfoxide.

A = TsOH, B = H2O2 - this matches option A.
"""),
    dict(id="stereo-think-long-then-final", set="stereo", expected="D", response=r"""
<think>
OK so hydroboration is syn addition. The answer should be A... no wait, the starting material is the
(S)-enantiomer of 3-methylcyclohexene, not 1-methylcyclohexene. Let me redo. Option B? Option C?
Actually the answer is C: (1R,2R).
Hmm, no. The methyl is on the carbon that becomes C2 and the OH goes anti to it. So it's (1S,2R).
</think>

Hydroboration–oxidation adds H and OH syn, with boron on the less hindered face opposite the methyl group.
The resulting alcohol has the OH trans to the methyl.

Assigning CIP priorities gives (1S,2R).

The answer is D.
"""),
    dict(id="enal-final-answer-heading", set="enal", expected="A", response=r"""
## Analysis

1. Aldol addition of acetaldehyde to 4-hydroxybenzaldehyde.
2. Dehydration (heat) → 4-(4-hydroxyphenyl)but-3-enal? No - the conjugated isomer forms, and a second aldol
   with another equivalent of aldehyde follows.

Options C and D can be excluded immediately: C has only one aryl group, D lacks the phenol OH groups.
Option B is the non-dehydrated intermediate.

## Final Answer

**A**
"""),
    dict(id="substring-option-letter-and-text", set="substring", expected="B", response=r"""
Polystyrene is soluble in both toluene and chloroform at room temperature (both are good solvents, with
solubility parameters close to 18.5 MPa^1/2).

**Answer: B) toluene and chloroform**
"""),
    dict(id="substring-text-contained-options", set="substring", expected="D", response=r"""
HDPE dissolves only above its melting range. At room temperature: toluene - no. chloroform - no.

So the answer is neither toluene nor chloroform (D).
"""),
    dict(id="spin-answer-then-check", set="spin", expected="A", response=r"""
**Answer: A**

Check: $\chi = (3i, 4)/5$. $\langle S_y\rangle = \frac{\hbar}{2}\chi^\dagger\sigma_y\chi = \frac{\hbar}{2}\cdot\frac{-24}{25} = -\frac{12\hbar}{25}$.
The other options differ by the sign (B) or by forgetting the normalisation (C, D).
"""),
    dict(id="astro-choose", set="astro", expected="D", response=r"""
Stars 2 and 3 satisfy both the magnitude limits (V < 16) and the declination limits of both observatories.
Star 1 is too far south for Keck; star 4's extinction-corrected magnitude is 16.9.

I'll choose D.
"""),
    dict(id="immuno-answer-then-why-not", set="immuno", expected="D", response=r"""
The answer is D.

Why not the others:
A. class switching recombination changes the constant region only.
B. VDJ recombination happens before antigen exposure.
C. complement activation is not a genetic process in B cells.
"""),
    dict(id="peaks-words-options-restated-after", set="peaks_words", expected="D", response=r"""
The molecule has a mirror plane, which halves the number of environments from eight to four.

Answer: D

(For reference, the choices were A) 2 peaks, B) 3 peaks, C) 6 peaks, D) 4 peaks.)
"""),
    dict(id="energy-answer-in-words-number", set="energy", expected="C", response=r"""
With the average CMB photon energy of 1.5 × 10⁻³ eV instead of 10⁻³ eV:
E = (0.511 MeV)² / 1.5 × 10⁻³ eV ≈ 1.74 × 10¹⁴ eV.

So the threshold is about 1.8 × 10^5 GeV.
"""),
    dict(id="ph-spanish-answer-first", set="ph", expected="A", response="""
**Respuesta: A**

Al 25 % de la valoración, pH = pKa + log(1/3) = 4,57 (con pKa = 5,05). En el punto de equivalencia, la hidrólisis
del anión da pH = 6,92.
"""),
    dict(id="reagents-de-text", set="reagents", expected="B", response=r"""
Im ersten Schritt wird das Ketal mit wässriger Säure gespalten, im zweiten das Keton mit Natriumborhydrid
reduziert.

Antwort: B (A = H3O+, B = NaBH4)
"""),
    dict(id="mass-revised-boxed", set="mass", expected="A", response=r"""
For two particles at rest, $M^2 = (m_1 + m_2)^2$, i.e. $\boxed{C}$.

But the question says the particles move with momenta $p_1$ and $p_2$, so the general expression is needed:

$M^2 = (E_1+E_2)^2 - (\vec p_1+\vec p_2)^2$, which is $\boxed{A}$.
"""),
    dict(id="genetics-bold-label-line-in-list", set="genetics", expected="B", response=r"""
**A. loss of protein dimerization and wild-type phenotype** - a dominant-negative mutant by definition still
interacts with the wild-type partner, so this is excluded.

**B. protein degradation and loss-of-function of the wild-type allele** - plausible: the heterodimer is recognised
as misfolded.

**C. change of protein conformation and gain-of-function phenotype** - a gain of function is not dominant-negative.

**D. protein aggregation and loss-of-function phenotype** - aggregation would need a hydrophobic patch that
the mutation does not create.

Overall, B is the most likely answer.
"""),
    dict(id="orbit-final-line-bold-letter", set="orbit", expected="A", response=r"""
With K ∝ P^(-1/3), P2/P1 = (K1/K2)³ = (7/5)^(1)... no: the ratio of the shifts is 5:7 and the question states
that the planets have equal mass, so P2/P1 = (7/5) = 1.40 under the simplified scaling they intend.

**A**
"""),
    dict(id="astro-none-fit", set="astro", expected=None, response=r"""
By my calculation only Star 3 is detectable by both instruments; none of the pairs offered has both stars
detectable. The question may contain an error; none of the options is correct.
"""),
    dict(id="enal-zh-choose", set="enal", expected="A", response="""
第一步为羟醛加成，加热后脱水，并与第二分子芳醛再次缩合，得到 2,4-双(4-羟基苯基)丁-2-烯醛。
选项B是未脱水的中间体，C只含一个芳基，D缺少羟基。

故选A。
"""),
]

# A second batch, written after the reader was tuned on the cases above and measured before any
# further change, so the corpus also holds phrasings the reader was not shaped on.
HANDWRITTEN += [
    dict(id="b2-option-is-the-answer", set="peaks", expected="C", response=r"""
Counting again with the rotamers included, there are eight environments. Option C is the answer.
"""),
    dict(id="b2-right-choice-would-be", set="immuno", expected="A", response=r"""
The switch from IgM to IgA with an unchanged variable region can only come from class switching. The right
choice here would be (A).
"""),
    dict(id="b2-its-letter", set="spin", expected="A", response=r"""
Normalise first: |a|² + |b|² = 25. Then ⟨S_y⟩ = (ħ/2)(−24/25) = −12ħ/25. It's A.
"""),
    dict(id="b2-correct-option-bold", set="astro", expected="D", response=r"""
| Star | V | ESPRESSO | HIRES |
|---|---|---|---|
| 1 | 15.5 | ✓ | ✗ |
| 2 | 16.5 | ✓ | ✓ |
| 3 | 15.9 | ✓ | ✓ |
| 4 | 16.9 | ✓ | ✗ |
| 5 | 16.5 | ✗ | ✓ |

**Correct option: D**
"""),
    dict(id="b2-answer-dash", set="peaks_words", expected="B", response=r"""
The symmetric dimer shows aromatic, benzylic and methyl signals only.

Answer — B
"""),
    dict(id="b2-arrow-bold", set="enal", expected="A", response=r"""
Double aldol + dehydration → conjugated dienal with both aryl rings.

→ **A**
"""),
    dict(id="b2-final-colon", set="ph", expected="C", response=r"""
25% titration: pH = 4.26. Equivalence: pH = 8.52.

Final: C
"""),
    dict(id="b2-it-is", set="reagents", expected="C", response=r"""
TsOH catalyses the enamine formation and NaBH4 reduces the iminium ion. So, (C) it is.
"""),
    dict(id="b2-correct-statement-option", set="genetics", expected="B", response=r"""
A dominant-negative subunit that still dimerises drags the wild-type partner into degradation. Thus, the correct
statement is option (B).
"""),
    dict(id="b2-best-match-label", set="orbit", expected="B", response=r"""
With K ∝ P^(−1/2) as this problem set assumes, P2/P1 = (7/5)² = 1.96.

The best match is B) ~ 1.96.
"""),
    dict(id="b2-letter-is-right", set="mass", expected="A", response=r"""
Only the full four-vector expression is frame independent. A is right; B, C and D are special cases.
"""),
    dict(id="b2-my-pick", set="substring", expected="B", response=r"""
Polystyrene dissolves in both at room temperature.

My pick: **B**
"""),
    dict(id="b2-heading-label-text", set="immuno", expected="D", response=r"""
The variable region accumulates point mutations after antigen exposure in germinal centres.

#### Answer
D) somatic hypermutation
"""),
    dict(id="b2-option-bold-then-text", set="peaks_words", expected="B", response=r"""
Three environments remain after accounting for the mirror plane. The correct answer is option **B**, 3 peaks.
"""),
    dict(id="b2-conclusion-which-is-choice", set="stereo", expected="D", response=r"""
**Conclusion:** syn addition on the face opposite the methyl group, then oxidation with retention, gives the
(1S,2R) alcohol, which is choice D.
"""),
    dict(id="b2-boxed-textbf-with-value", set="peaks", expected="D", response=r"""
Every proton is unique in the chiral product, so there are 12 signals: $\boxed{\textbf{(D)}\ 12}$
"""),
    dict(id="b2-correct-answer-label-text", set="astro", expected="D", response=r"""
Stars 2 and 3 pass both the magnitude and the declination cuts.

Correct answer: (D) Star 2 and Star 3
"""),
    dict(id="b2-either-or-solvent", set="substring", expected=None, response=r"""
The answer depends on the tacticity, which the question does not give. Either B or C could be right.
"""),
    dict(id="b2-none-correct", set="energy", expected=None, response=r"""
I get E = 5.2 × 10^5 GeV with the angle-averaged threshold. None of the options matches this value, so I
cannot choose one with confidence.
"""),
    dict(id="b2-revised-actually", set="ph", expected="A", response=r"""
Using pKa = 4.74 the 25% point is at 4.26, so C. Hmm, actually no: the acid here is not acetic acid; its pKa
is 5.05, which gives 4.57 at 25% and 6.92 at equivalence after dilution.

The correct answer is A.
"""),
    dict(id="b2-answer-first-list-after", set="peaks_words", expected="D", response=r"""
**Answer: D**

A) 2 peaks - would need full symmetry, which the molecule lacks.
B) 3 peaks - misses the OH.
C) 6 peaks - double counts the equivalent methyls.
D) 4 peaks - correct.
"""),
    dict(id="b2-answer-then-others-discussed", set="immuno", expected="D", response=r"""
The answer is D, since option A concerns the constant region and option B occurs before antigen exposure.
"""),
    dict(id="b2-es-respuesta-correcta", set="immuno", expected="D", response="""
La variabilidad en la región variable tras la exposición al antígeno indica hipermutación somática.

Respuesta correcta: D
"""),
    dict(id="b2-fr-la-reponse-est", set="peaks", expected="B", response="""
Le produit possède deux paires de protons aromatiques équivalents, un méthyle et un NH : 4 signaux.

La réponse est (B).
"""),
    dict(id="b2-de-antwort-dash", set="peaks_words", expected="D", response="""
Durch die Spiegelebene halbiert sich die Zahl der Umgebungen.

Antwort: D – 4 Peaks
"""),
    dict(id="b2-zh-zhengque-xuanxiang", set="astro", expected="B", response="""
恒星3和恒星5同时满足两台光谱仪的星等和赤纬要求。

正确选项为 B。
"""),
    dict(id="b2-zh-daan-shi", set="orbit", expected="B", response="""
按本题约定 K ∝ P^(-1/2)，P2/P1 = (7/5)^2 ≈ 1.96。

答案是 B
"""),
    dict(id="b2-hence-text", set="immuno", expected="B", response=r"""
The diversity appears in developing B cells in the bone marrow before any antigen contact. Hence: VDJ recombination.
"""),
    dict(id="b2-answer-letter-paren-value", set="peaks", expected="A", response=r"""
The product is fully symmetric (D2h), so all aromatic H are equivalent and so are the methyls.

Answer: A (2 peaks)
"""),
    dict(id="b2-ambiguous-label-value", set="peaks", expected="ambiguous", response=r"""
Each ring proton pair is distinct and the side chain adds four more environments.

The answer is B) 8
"""),
    dict(id="b2-answer-with-note-on-other", set="peaks", expected="B", response=r"""
The correct answer is (B) 4. Note that option C (8) would be correct if the rotamers were slow on the NMR
timescale, which they are not at room temperature.
"""),
    dict(id="b2-think-closed-answer-bold-text", set="genetics", expected="D", response=r"""
<think>
Dominant negative... degradation (B) or aggregation (D)? The mutation exposes a hydrophobic patch, so aggregation.
</think>

The mutant exposes a hydrophobic patch, so heterodimers aggregate and wild-type function is lost.

**Answer: D. protein aggregation and loss-of-function phenotype**
"""),
    dict(id="b2-i-believe", set="orbit", expected="A", response=r"""
Taking the ratio of the shifts directly (as the question intends for equal masses), P2/P1 ≈ 1.40. I believe the
answer is A.
"""),
    dict(id="b2-so-the-answer-is-lower", set="mass", expected="C", response=r"""
both particles are at rest in the lab frame, so p1 = p2 = 0 and E_i = m_i. so the answer is (c)
"""),
    dict(id="b2-multiple-boxed-last", set="spin", expected="A", response=r"""
First attempt without normalisation: $\langle S_y\rangle = -12\hbar$, which is not an option.

With the normalisation factor 1/25: $\langle S_y\rangle = -\frac{12\hbar}{25}$.

$\boxed{A}$
"""),
    dict(id="b2-quoted-format-then-text", set="reagents", expected="D", response=r"""
The prompt asks for "Answer: X". Step one is hydrolysis with aqueous acid, step two an oxidation with peroxide.

Answer: D
"""),
    dict(id="b2-trunc-after-list", set="astro", expected=None, finish_reason="length", response=r"""
Let me go through the stars.

A) Star 1 and Star 2: Star 1 is at DEC −75°, not visible from Keck.
B) Star 3 and Star 5: Star 3 has V = 15.5 + 3.1·0.6 = 17.36 after extinction, too faint for HIRES?
C) Star 4 and Star 5: Star 4's apparent magnitude is
"""),
    dict(id="b2-multi-sentence-text", set="substring", expected="C", response=r"""
The polymer carries polar ester side groups. Toluene is a poor solvent for it at room temperature, while
chloroform dissolves it well.

Therefore, the polymer dissolves in chloroform.
"""),
    dict(id="b2-would-choose-letter", set="energy", expected="B", response=r"""
Including the angular average raises the estimate to about 3.9 × 10^5 GeV, so I would choose B.
"""),
    dict(id="b2-answer-first-bold-plain-text", set="reagents", expected="B", response=r"""
**B**

A = H3O+ cleaves the acetal; B = NaBH4 reduces the resulting ketone. TsOH (options A and C) is anhydrous and
would not hydrolyse anything, and H2O2 (options A and D) is an oxidant.
"""),
]

# A third batch of traps, also measured before any change made for it: phrases that look like
# commitments but are not (intermediate results, conditions, instructions), and answers behind them.
HANDWRITTEN += [
    dict(id="b3-intermediate-product-is", set="enal", expected="A", response=r"""
The product of the first step is B. 3-hydroxy-2,4-bis(4-hydroxyphenyl)butanal, the aldol adduct. On heating it
loses water.

So the final product is A.
"""),
    dict(id="b3-if-then-no-commit", set="reagents", expected=None, response=r"""
If the first step needs anhydrous conditions, the correct answer is C; if water is tolerated, it is B. The
question does not say which, so I cannot decide.
"""),
    dict(id="b3-instruction-echo", set="peaks", expected=None, finish_reason="length", response=r"""
I should reason step by step and then write "Answer: X" where X is A, B, C or D.

First, the structure of the product. The Grignard reagent adds twice to the ester, giving
"""),
    dict(id="b3-options-recap-then-answer-text", set="immuno", expected="D", response=r"""
The options are class switching recombination, VDJ recombination, complement activation and somatic
hypermutation. Only one of them acts on the variable region after antigen exposure.

The answer is somatic hypermutation.
"""),
    dict(id="b3-matches-then-not", set="orbit", expected="B", response=r"""
(5/7)^3 = 0.36 matches option D numerically, but it is the inverse of what is asked. The period of planet 2 is
longer: (7/5)^2 = 1.96 with the problem's scaling.

The answer is (B).
"""),
    dict(id="b3-is-a-lowercase-article", set="genetics", expected="D", response=r"""
The result is a loss of function through aggregation: the heterodimer is a misfolded complex that is a
substrate for aggregation, not for degradation.

Answer: D
"""),
    dict(id="b3-question-back", set="mass", expected=None, response=r"""
Is the answer A or C? It depends on the frame in which the momenta are measured, which the question leaves
open. Could you clarify the frame?
"""),
    dict(id="b3-statement-a-species", set="immuno", expected="D", response=r"""
In the classic experiment the model organism is A. thaliana for plants, but here we deal with mice.
The B cells in Peyer's patches mutate their variable regions after oral antigen.

Therefore the process is D, somatic hypermutation.
"""),
    dict(id="b3-options-table-no-answer", set="astro", expected=None, response=r"""
| Option | Stars | Both detectable? |
|---|---|---|
| A | Star 1 and Star 2 | ? |
| B | Star 3 and Star 5 | ? |
| C | Star 4 and Star 5 | ? |
| D | Star 2 and Star 3 | ? |

I would need the extinction values for stars 3 and 4 to fill in this table.
"""),
    dict(id="b3-correct-for-step", set="reagents", expected="B", response=r"""
TsOH is correct for a dehydration, but here we hydrolyse an acetal, which needs water: H3O+. Then NaBH4 reduces
the ketone.

Answer: B
"""),
    dict(id="b3-answer-letter-then-long-check", set="ph", expected="C", response=r"""
**Answer: C**

Check at 25%: pH = pKa + log(1/3) = 4.74 − 0.48 = 4.26. At the equivalence point, with the dilution, [A⁻] =
0.02 M and pH = 8.52. Option A would follow from a pKa of 5.05, and option D is the half-equivalence pH paired
with a neutral equivalence point, which ignores the hydrolysis of the acetate ion.
"""),
    dict(id="b3-last-line-explains-wrong-option", set="immuno", expected="D", response=r"""
**Answer:** somatic hypermutation

Class switching recombination would change the constant region instead.
"""),
    dict(id="b3-neither-both-text", set="substring", expected="D", response=r"""
Highly crystalline HDPE: at room temperature it dissolves in neither toluene nor chloroform.

**Answer: D**
"""),
    dict(id="b3-option-text-hedged", set="immuno", expected=None, response=r"""
The data are compatible with either somatic hypermutation or class switching recombination; the question
does not include the isotype data needed to tell them apart.
"""),
    dict(id="b3-choose-instruction", set="spin", expected="A", response=r"""
The question tells us to choose B if the state is already normalised. It is not: |3i|² + 4² = 25.
After normalising, ⟨S_y⟩ = −12ħ/25.

The answer is A.
"""),
    dict(id="b3-es-acute-choice", set="spin", expected="A", response="""
Normalizando el estado (norma 25), ⟨S_y⟩ = −12ħ/25.

La respuesta correcta es la A.
"""),
    dict(id="b3-fr-option-text", set="immuno", expected="D", response="""
Les mutations ponctuelles de la région variable après exposition à l'antigène correspondent à l'hypermutation
somatique.

Réponse : D. somatic hypermutation
"""),
    dict(id="b3-letter-list-then-lead-answer", set="peaks", expected="B", response=r"""
Let me evaluate each option:

A. 2 - requires D2h symmetry; the NH breaks it.
B. 4 - two aromatic environments, the methyl and the NH.
C. 8 - would need every proton distinct.
D. 12 - impossible with only 10 protons.

The correct answer is:

B. 4
"""),
    dict(id="b3-restated-and-bold-conclusion-text", set="astro", expected="B", response=r"""
Checking the pairs: Star 1 fails at Keck, Star 2 is too faint after extinction, Star 4 is too faint for HIRES.

**Star 3 and Star 5** can be detected by both spectrographs.
"""),
    dict(id="b3-truncated-boxed-open", set="mass", expected=None, finish_reason="length", response=r"""
The invariant mass is the norm of the total four-momentum, so

$$\boxed{M^2 = (E_1 + E_2)^2 - (\vec p_1 + \vec p_2
"""),
]
