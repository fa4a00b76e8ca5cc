//! What is there to grade: the course checkout ([`checkout`]), each
//! student's exercises in a submissions folder ([`discovery`]) under an id
//! that is safe everywhere ([`student_id`]), the files taken from each
//! ([`overlay`]), and which students a command grades ([`selection`]).

pub mod checkout;
pub mod discovery;
pub mod overlay;
pub mod selection;
pub mod student_id;
